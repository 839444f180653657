"""Embedding: the hash embedder with its bucket counts, and the Ollama embedder."""
