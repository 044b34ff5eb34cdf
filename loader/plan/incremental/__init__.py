"""Planning while the pages arrive: the machinery that makes `loader plan` fast, apart from the plan.

The plan itself is `loader.plan.diff.plan_changes` over whole collections (pure). What is here
gives the very same plan sooner:

- `parts`: the blocks split into parts that share nothing, each diffed as soon as its own
  collections are in;
- `early`: a part's records planned while its last pages still come in;
- `collections`: the live collections fetched side by side, as they come in;
- `diffing`: each part drafted and diffed in a worker thread that gives way to the event loop;
- `reading`: the sources read off the event loop's back (a child process when they are large).

Each is held equal to the plain path by its tests (tests/plan/incremental/).
"""
