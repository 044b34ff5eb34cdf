"""Mapping tests (`loader test`, contract section 12): given rows in, expected records out, offline.

- `cases`: the `*.test.yaml` format as frozen values (given values are text unless typed);
- `given`: a case's rows (or JSON or XML document) in place of the blocks' source;
- `compare`: built records against expected ones, by key, field by field;
- `run`: each case through the real source → records path and the planner's merge.
"""
