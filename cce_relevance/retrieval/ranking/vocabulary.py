"""BM25's term numbers kept as bytes: the terms in number order as one UTF-8 string, and the
numbers sorted by term.

A corpus's postings number every distinct term (`Postings.term_id`); as a `dict` that is a
string, an int and a table slot a term, some 120 bytes, held by the index for the whole run,
while ranking looks up only the queries' terms. A kept corpus's record holds the terms this way
(retrieval/cache/corpus_record.py), and a cold build's merged postings are turned into it
(`vocabulary_of`), so both hold a few bytes a term and the record is written from it as it is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np


def vocabulary_of(term_id: Mapping[str, int]) -> RecordVocabulary:
    """`term_id` (numbered 0, 1, ... in iteration order) as a `RecordVocabulary`: itself when it
    is one, else made from its terms (the same bytes a record of it holds)."""
    if isinstance(term_id, RecordVocabulary):
        return term_id
    words = list(term_id)
    return RecordVocabulary(" ".join(words).encode("utf-8", "surrogatepass"), term_order(words))


def term_order(words: Sequence[str]) -> np.ndarray:
    """The numbers of `words` (numbered in order) sorted by word, as a record keeps them."""
    return np.array(sorted(range(len(words)), key=words.__getitem__), dtype=np.int32)


class RecordVocabulary(Mapping[str, int]):
    """BM25's term numbers as a corpus record keeps them (retrieval/cache/corpus_record.py) and a
    cold build's postings hold them (`vocabulary_of`), instead of a `dict` of every term (about
    120 bytes a term: the string, its number, the table): the terms in number order as
    space-separated UTF-8 (`vocabulary`), and the numbers sorted by term (`by_word`). A term is
    found by binary search over the UTF-8 bytes, whose order is that of the code points (lone
    surrogates too, as "surrogatepass" encodes them), and the answer kept: ranking looks up the
    queries' terms only. Iterating gives the terms in number order, as a `Postings.term_id` does."""

    def __init__(self, vocabulary: bytes, by_word: np.ndarray) -> None:
        n = by_word.shape[0]
        spaces = np.flatnonzero(np.frombuffer(vocabulary, dtype=np.uint8) == 0x20)
        if (spaces.shape[0] + 1 if n else len(vocabulary)) != n:
            raise ValueError("the vocabulary is not one word per term")
        if not np.array_equal(np.sort(by_word), np.arange(n)):
            raise ValueError("the term order is not a permutation")
        self._vocabulary, self._by_word = vocabulary, by_word
        self._starts = np.concatenate(([0], spaces + 1)).astype(np.int64)
        self._ends = np.concatenate((spaces, [len(vocabulary)])).astype(np.int64)
        self._found: dict[str, int] = {}  # -1: not a term

    @property
    def utf8(self) -> bytes:
        """The terms in number order, space-separated UTF-8 (as a corpus record keeps them)."""
        return self._vocabulary

    @property
    def by_word(self) -> np.ndarray:
        """The term numbers sorted by term (as a corpus record keeps them)."""
        return self._by_word

    def __len__(self) -> int:
        return self._by_word.shape[0]

    def __iter__(self) -> Iterator[str]:
        if not len(self):
            return iter(())
        return iter(self._vocabulary.decode("utf-8", "surrogatepass").split(" "))

    def __getitem__(self, term: str) -> int:
        number = self._found.get(term)
        if number is None:
            number = self._found[term] = self._search(term.encode("utf-8", "surrogatepass"))
        if number < 0:
            raise KeyError(term)
        return number

    def _search(self, key: bytes) -> int:
        words, by_word, starts, ends = self._vocabulary, self._by_word, self._starts, self._ends
        lo, hi = 0, by_word.shape[0]
        while lo < hi:
            mid = (lo + hi) // 2
            t = by_word[mid]
            if words[starts[t] : ends[t]] < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < by_word.shape[0]:
            t = int(by_word[lo])
            if words[starts[t] : ends[t]] == key:
                return t
        return -1
