"""The scheduler around the planner: the machinery that makes `loader plan` fast, apart from the plan.

The plan itself is `loader.plan.diff.plan_changes` (pure). What is here gives the very same plan
sooner and holding less:

- `parts`: the blocks split into parts that share nothing, each planned as soon as its own
  collections are in;
- `collections`: the live collections fetched side by side, as they come in;
- `diffing`: each part planned by `plan_changes` in a worker thread, its records and live
  collections let go of once it is planned;
- `reading`: the sources read off the event loop's back (a child process when they are large).

Each is held equal to the plain path by its tests (tests/plan/incremental/).
"""
