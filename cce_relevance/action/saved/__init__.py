"""Sides saved across jobs: a scored side's state, base reuse from the cache, shard states."""
