"""Function words that carry no retrieval signal, shared by the retriever's tokenizer
(retrieval.text) and the stores' entity-name text match (a question's "the" must not seed "the
book fair"). Deliberately short: pronouns like "my" are handled by the retriever (they seed the
user's node), not here."""

from __future__ import annotations

STOPWORDS = frozenset(
    "a an the and or but of to in on at for with by from as is are was were be been being do does did "
    "has have had it its this that these those there here what which who whom whose when where why how "
    "i me my mine myself you your yours we our us he him his she her they them their "
    "about into over than then so if not no any some all can could would should will shall may might".split()
)
