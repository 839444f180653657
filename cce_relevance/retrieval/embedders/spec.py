"""What an embedder is, as a project names it: the built-in ones and the kind of each.

A backend variant names one (`embedder = "wordllama"`), as does `index --embedder`. The built-in
names are `hash` (the reference's), `ollama` (the server in `CCE_OLLAMA_URL`), `wordllama` (the
model inside the `wordllama` wheel, the optional extra `cce-relevance[semantic]`) and `openai`
(OpenAI's endpoint, the key in `OPENAI_API_KEY`); a `[embedders.NAME]` table of the project's
`cce-relevance.toml` names another, of kind `openai` or `wordllama`, with its own settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from cce_relevance.reference import EMBED_BATCH_SIZE, HASH_EMBEDDER, OLLAMA_EMBEDDER

WORDLLAMA = "wordllama"
OPENAI = "openai"
KINDS = (HASH_EMBEDDER, OLLAMA_EMBEDDER, WORDLLAMA, OPENAI)

WORDLLAMA_MODEL = "l2_supercat"
WORDLLAMA_DIMENSIONS = (64, 128, 256)  # the bundled model's Matryoshka widths (its first components)
OPENAI_URL = "https://api.openai.com/v1"
OPENAI_MODEL = "text-embedding-3-small"
OPENAI_KEY_VARIABLE = "OPENAI_API_KEY"
DEFAULT_TIMEOUT = 60.0  # seconds for one request
DEFAULT_DEADLINE = 900.0  # seconds for every request of a run, retries and waits included
DEFAULT_RETRIES = 6  # further attempts after a 429 or 5xx answer or a lost connection
MAX_INPUT_CHARS = 8000  # each text is cut to this many characters before it is embedded


@dataclass(frozen=True)
class EmbedderSpec:
    """One embedder: `name` as the project calls it (what a store built with it records), its
    `kind`, and the settings of that kind. `dimensions` None keeps the model's own width."""

    name: str
    kind: str
    model: str = ""
    dimensions: int | None = None
    base_url: str = ""
    api_key_env: str | None = None  # the environment variable holding the key; None sends none
    batch_size: int = EMBED_BATCH_SIZE
    timeout: float = DEFAULT_TIMEOUT
    deadline: float = DEFAULT_DEADLINE
    max_retries: int = DEFAULT_RETRIES
    max_input_chars: int = MAX_INPUT_CHARS

    @property
    def remote(self) -> bool:
        """Whether it sends text to a service the project's file chose (and reads a key for it)."""
        return self.kind == OPENAI

    @property
    def is_hash(self) -> bool:
        return self.kind == HASH_EMBEDDER


HASH_SPEC = EmbedderSpec(HASH_EMBEDDER, HASH_EMBEDDER)

BUILTIN_EMBEDDERS: dict[str, EmbedderSpec] = {
    HASH_EMBEDDER: HASH_SPEC,
    OLLAMA_EMBEDDER: EmbedderSpec(OLLAMA_EMBEDDER, OLLAMA_EMBEDDER),
    WORDLLAMA: EmbedderSpec(WORDLLAMA, WORDLLAMA, WORDLLAMA_MODEL, WORDLLAMA_DIMENSIONS[-1]),
    OPENAI: EmbedderSpec(OPENAI, OPENAI, OPENAI_MODEL, None, OPENAI_URL, OPENAI_KEY_VARIABLE),
}
"""The embedders every project has, by name."""
