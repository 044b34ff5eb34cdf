"""Desired records x live records -> Plan.

The pure core (values in, values out; no I/O, no clock):

- `model`: the plan as frozen values; `plan_dict` its plan.json form;
- `diff`: `plan_changes`, the plan of blocks of desired records against whole live collections;
- `merge`: the blocks' rows merged into one entry per record;
- `resolve`: key matching (exact; folded only to warn) and reference resolution; `unique_claims`
  the values of a unique group claimed twice;
- `renumber`: records moved to a new key (`renamed:`), `renumber_history` their W under it;
  `retire`: records dropped from the source retired or released (`on_dropped:`);
- `record`: one record's plan; `fields` its fields compared (`field_plan`, `field_values`, `status`);
- `dependencies`: reference cycles refused, dependants of errors blocked;
- `compare`: set-like lists and label maps; `masking`: PII in what reviewers read;
- `digest`: the plan's digest, binding a reviewed plan to its apply.

Around it: `makers` (the fast constructors the diff makes its values with), `plan_file` (plan.json
on disk), `run` (read the sources, fetch the live collections, diff), and `incremental/`, the
machinery that makes the same plan while the pages still arrive.
"""
