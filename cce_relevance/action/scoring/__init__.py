"""Scoring fixture sets at the base and head commits: the side model, range anchors, timings."""
