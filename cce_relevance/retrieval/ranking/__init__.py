"""Ranking arithmetic: exact top-k with total order, BM25 and its postings, cosine over embeddings."""
