"""The Action's modes: evaluate (the default; a `shard: I/N` job ends early), merge (a sharded
run's fan-in), publish (post a comment a fork's run prepared); deliver and comment end the first
two the same way."""
