"""Embedders a backend or an index may choose instead of the hash embedder: WordLlama's static
model, any OpenAI-compatible `/v1/embeddings` endpoint, Ollama, and the on-disk cache of their
vectors.

They come after the index stage: an index is built (and cached) as the reference builds it, and
a variant with another embedder gets the same chunks ranked by cosine over that embedder's
vectors (`service.EmbeddingService.index`). Nothing here shapes an index-cache record, so editing
it keeps every user's index cache (retrieval/cache/index_cache.py hashes the stages that do).
"""
