"""What the loader wrote: per environment a snapshot, a journal per apply, and a head.

    digests   the digest W of a value (plain, or keyed for entities with personal fields)
    lines     the values: a record's history line, a field's owner and W
    snapshot  the snapshot files: one line a record, sharded by entity and key range
    journal   one file per apply, appended as it goes; folded into the snapshot after
    head      lineage, serial, last apply, the loader's service users, the key's fingerprint
    location  where a history lives and which key it uses, from plain configuration values
    store     the facade the plan reads and the apply writes
    errors    what can be wrong with a history, and what to do

Read by `loader/plan/`, written by `loader/apply/`; a store below both, it imports neither (the
revert and baseline plans made from it are `loader/plan/`'s).
"""
