"""The frozen learner question sets from set 9 on are well formed, each described once in
:data:`SETS` (the checks are ``frozen_questions.FrozenSet``'s; the item model is set 2's): the
counts the set promises, that it shares no source with any earlier question set, with the
diagnosis corpora, with the chat's cards or with the judged records that existed when it was
built, that translations sit right after their originals, that the text is in the item's
language, that the lessons of the course are asked about, that solution requests name exercise
steps (new ones, or each a different one where the sets before had named them all), and that
each value item's snippet prints its ``expected`` output on the installed torch. They never
call the chat, so they cannot leak a split into it.

A new set is one more row; the sets after a row are not earlier material for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from frozen_questions import FrozenSet

DAYS = ("2026-12-03", "2026-12-04", "2026-12-05-chat3", "2026-12-06", "2026-12-06-b",
        "2026-12-06-c", "2026-12-06-chatfacts", "2026-12-06-d", "2026-12-06-e", "2026-12-06-f",
        "2026-12-06-g", "2026-12-06-h", "2026-12-07", "2026-12-07-b", "2026-12-07-c",
        "2026-12-07-d", "2026-12-07-e", "2026-12-07-f", "2026-12-07-g", "2026-12-07-h",
        "2026-12-08-i")
"""The judged records in the order they were made; each set names those before it was built."""

F_DIAGNOSIS = ("corpus25", "corpus26", "corpus27", "corpus28")
"""The diagnosis corpora of the measure of 2026-12-07-f, built beside learner21 and 22."""
G_DIAGNOSIS = ("corpus29", "corpus30", "corpus31", "corpus32")
"""The diagnosis corpora of the measure of 2026-12-07-g, built beside learner23 and 24."""
H_DIAGNOSIS = ("corpus33", "corpus34", "corpus35", "corpus36")
"""The diagnosis corpora of the measure of 2026-12-07-h, built beside learner25 and 26."""
I_DIAGNOSIS = ("corpus37", "corpus38", "corpus39", "corpus40")
"""The diagnosis corpora of the measure of 2026-12-08-i, built beside learner27 and 28."""
ROWS = (
    # 16 of 20 lessons asked (none for data-norm, non-scalar, dynamic-graph or review); the 5
    # real Chinese posts no earlier set cites are all off-topic (README.md)
    FrozenSet(folder="learner9", per_language=27, lessons_asked=16, judged_days=DAYS[:7],
              sha256="78f0c4d00b959b81cedf605d33fc814b474188158533833423ca9f24039c31d4",
              at_least={"value": 4, "solution": 5, "off_topic": 9, "real zh": 5},
              least_threads=1100),
    FrozenSet(folder="learner10", per_language=27, lessons_asked=12, judged_days=DAYS[:8],
              sha256="4f0e195690efa536d04960f00052366b37101955c8e95404883b85a756053be5",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1150),
    # only one exercise step was left free by sets 1 to 10: four requests reuse a named step
    FrozenSet(folder="learner11", per_language=27, lessons_asked=19, judged_days=DAYS[:9],
              sha256="7609bf62f0dc58b6ef79b2e23a59b8715a07d919b564aa78d63bed0d0dd0c918",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1200, reused_steps=4),
    # sets 1 to 11 had named all 79 steps: each of the five requests reuses a different one
    FrozenSet(folder="learner12", per_language=27, lessons_asked=20, judged_days=DAYS[:10],
              sha256="662ab3b5b042ceb103cdc2f95be7ebaccdf98bebd36470473989de99512bb535",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1250, reused_steps=5),
    # again each of the five requests reuses a different step, none named by sets 7, 8, 11 or 12;
    # the 7 real Chinese posts no earlier set cites are all off-topic (README.md)
    FrozenSet(folder="learner13", per_language=27, lessons_asked=20, judged_days=DAYS[:11],
              sha256="22880fcf9a2d52b71b637507a418c54da39ae119661d0f33ce7ff8c5a7c87727",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1350, reused_steps=5),
    # as set 13: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12 or 13; two of the 7 real Chinese posts no earlier set cites are on-topic (README.md)
    FrozenSet(folder="learner14", per_language=27, lessons_asked=20, judged_days=DAYS[:12],
              sha256="84a779b9a36a6022337d0fa77efea2c1eb5aed779ee9ccfce62d7387930aa759",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1450, reused_steps=5),
    # as set 14: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12, 13 or 14 (all five English); three of the 8 real Chinese posts are on-topic (README.md)
    FrozenSet(folder="learner15", per_language=27, lessons_asked=20, judged_days=DAYS[:13],
              sha256="0067f6dc28dd06af87a1a6c0322a1829df3705d2d9a32a38b0bd345ca1072502",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1500, reused_steps=5),
    # as set 15: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12, 13, 14 or 15 (all five English); the 7 real Chinese posts are all off-topic (README.md)
    FrozenSet(folder="learner16", per_language=27, lessons_asked=20, judged_days=DAYS[:14],
              sha256="2b50de041ffd9077b4c8dbbefc6f4c5e12f5da192a44c5fd2186c9be695ca6ca",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1550, reused_steps=5),
    # as set 16: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12, 13, 14, 15 or 16 (all five English); of the 8 real Chinese posts one is on-topic; sources
    # only from GitHub threads of owners a to m (README.md)
    FrozenSet(folder="learner17", per_language=27, lessons_asked=20, judged_days=DAYS[:15],
              sha256="fd943ac542df02562eeb0e45bedabc042a5c332145fa9cb50fbc2de1979874d2",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1600, reused_steps=5),
    # as set 16: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12, 13, 14, 15 or 16 (four English, one from a real Chinese request); two of the 7 real
    # Chinese posts are on-topic (README.md); built beside set 17 from the other
    # sources (pages, and GitHub threads of owners n to z)
    FrozenSet(folder="learner18", per_language=27, lessons_asked=20, judged_days=DAYS[:15],
              sha256="3c610624e5dc8ca4defeeb705099bc741b1a152e571215a68b373811e733fa28",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1650, reused_steps=5),
    # learner19 and learner20: the measure of 2026-12-07-e, built blind side by side
    # as set 17: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12, 13, 14, 15, 16, 17 or 18 (all five English); three of the 8 real Chinese posts are
    # on-topic (README.md); sources only from GitHub threads of owners a to m
    FrozenSet(folder="learner19", per_language=27, lessons_asked=20, judged_days=DAYS[:16],
              sha256="a0a3305aaad500f366abfca9ef44aa5a4596fb297e9edfdade68589de3d121a9",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1850, reused_steps=5),
    # as set 16: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12, 13, 14, 15, 16, 17 or 18 (all five English); one of the 7 real Chinese posts is on-topic;
    # sources only from pages and GitHub threads of owners n to z, built beside another set drawn
    # from owners a to m (README.md)
    FrozenSet(folder="learner20", per_language=27, lessons_asked=20, judged_days=DAYS[:16],
              sha256="7e2f96c85943e16a0b58e10c9d27e7cf7ce6b76608bba5110dc869e7c5da4dcc",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=1850, reused_steps=5),
    # learner21 and its sibling: the measure of 2026-12-07-f, built blind side by side
    # as set 19: each of the five requests reuses a different step, none named by sets 7, 8, 11 to
    # 20 (all five English); sources only from GitHub threads of owners a to m. value lowered to 2
    # and real zh to 6: the area held one value-style question with runnable code and six real
    # Chinese posts no earlier material cites (README.md)
    FrozenSet(folder="learner21", per_language=27, lessons_asked=20, judged_days=DAYS[:17],
              sha256="2233351389963f7a056e72fbe50217f24b80f387ff79e1bb4a9c241525850afe",
              at_least={"value": 2, "solution": 5, "off_topic": 8, "real zh": 6},
              least_threads=2000, reused_steps=5,
              beside=F_DIAGNOSIS),
    # as set 20: each of the five requests reuses a different step, none named by sets 7, 8, 11,
    # 12, 13, 14, 15, 16, 17, 18, 19 or 20 (all five English); one of the 7 real Chinese posts is
    # on-topic; sources only from pages and GitHub threads of owners n to z, built beside another
    # set drawn from owners a to m (README.md)
    FrozenSet(folder="learner22", per_language=27, lessons_asked=20, judged_days=DAYS[:17],
              sha256="d1a2144feb41c892a00ea6951f29e4a36db0356f7d31b1eca9d137c254a0abd4",
              at_least={"value": 4, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=2000, reused_steps=5,
              beside=F_DIAGNOSIS),
    # as set 21: each of the four requests reuses a different step, none named by sets 7, 8, 11 to
    # 22 (all English); sources only from GitHub threads of owners a to m. value lowered to 2 and
    # solution to 4: the area held one value-style question with code that runs on a CPU and
    # prints, and four requests for exercise answers no earlier material cites; three of the 7 real
    # Chinese posts are on-topic (README.md)
    FrozenSet(folder="learner23", per_language=27, lessons_asked=20, judged_days=DAYS[:18],
              sha256="80bdda4b0a1989b8436be25849c50e1a6a918d3ca8073c27f5c060d666558b8d",
              at_least={"value": 2, "solution": 4, "off_topic": 8, "real zh": 7},
              least_threads=2150, reused_steps=5, beside=G_DIAGNOSIS),
    # learner24: the measure of 2026-12-07-g, built blind beside another set
    # as set 22: none of the requests names a step named by sets 7, 8, 11 to 22 (all English);
    # sources only from pages and GitHub threads of owners n to z, built beside another set drawn
    # from owners a to m. solution lowered to 3: the area held three requests for exercise answers
    # that no earlier material cites; the 7 real Chinese posts are all off-topic (README.md)
    FrozenSet(folder="learner24", per_language=27, lessons_asked=20, judged_days=DAYS[:18],
              sha256="0eb8f98a3356cf5827e5e31d72244eddb0abc482a7a6b1191b476efde4d25254",
              at_least={"value": 4, "solution": 3, "off_topic": 8, "real zh": 7},
              least_threads=2200, reused_steps=5, beside=G_DIAGNOSIS),
    # learner25: the measure of 2026-12-07-h, built blind beside another set
    # as set 23: no request names a step named by sets 7, 8, 11 to 24 (all four English); sources
    # only from GitHub threads of owners a to m and forum pages whose path has an even length.
    # Lowered where the sources or the course forced it (README.md): solution 4 (only four exercise
    # steps are left that sets 7, 8 and 11 to 24 do not name), value 2 (one value-style question
    # whose code runs on a CPU), real zh 6 (six real Chinese posts no earlier material cites),
    # lessons_asked 17 (no uncited question in the area on no-grad, grad-hooks or custom-function)
    FrozenSet(folder="learner25", per_language=27, lessons_asked=17, judged_days=DAYS[:19],
              sha256="507ca2298c13a3ac15719fce582c873c24a1a2c21f7699fdbf0c878d447736dc",
              at_least={"value": 2, "solution": 4, "off_topic": 8, "real zh": 6},
              least_threads=2300, reused_steps=5, beside=H_DIAGNOSIS),
    # learner26: the measure of 2026-12-07-h, built blind beside another set
    # as set 24: sources only from pages and GitHub threads of owners n to z, built beside another
    # set drawn from owners a to m. solution lowered to 4: only four exercise steps are left that
    # sets 7, 8 and 11 to 24 do not name, and the four requests name them (all English, each step
    # named by an earlier question file); two of the 7 real Chinese posts are on-topic (README.md)
    FrozenSet(folder="learner26", per_language=27, lessons_asked=20, judged_days=DAYS[:19],
              sha256="27db0c579b11d0c7d3c153a03ff86ac7388597f680ebb3f12b783778fa5ee7bc",
              at_least={"value": 4, "solution": 4, "off_topic": 8, "real zh": 7},
              least_threads=2350, reused_steps=5, beside=H_DIAGNOSIS),
    # learner27: the measure of 2026-12-08-i, built blind beside another set
    # as set 25: sources only from GitHub threads of owners a to m (pages with an even path length
    # were searched too; none usable was found). Lowered where the sources forced it (README.md):
    # value 2 (one value-style question whose pasted code runs and prints, with its translation);
    # the five requests all name steps named by earlier sets (none is left free)
    FrozenSet(folder="learner27", per_language=27, lessons_asked=20, judged_days=DAYS[:20],
              sha256="cea83eb89db55704301aa9d7e1f675257399d8d0797a09a0f1d55d3a7c96bbe9",
              at_least={"value": 2, "solution": 5, "off_topic": 8, "real zh": 7},
              least_threads=2500, reused_steps=5, beside=I_DIAGNOSIS),
    # learner28: built blind beside another set of the same measure
    # as set 26: sources only from pages whose URL path has an odd length and GitHub threads of
    # owners n to z, built beside another set drawn from owners a to m and even-length pages.
    # Lowered where the sources forced it (README.md): value 2 (one value-style question whose code
    # runs on a CPU and prints) and solution 4 (four requests for exercise answers no earlier
    # material cites, each put to a different step named by an earlier question file); none of the
    # 7 real Chinese posts is on-topic
    FrozenSet(folder="learner28", per_language=27, lessons_asked=20, judged_days=DAYS[:20],
              sha256="8caa4e516466a0eed3dc7a4fd7d007b465760a96590cc5afac0cf3643980b3a2",
              at_least={"value": 2, "solution": 4, "off_topic": 8, "real zh": 7},
              least_threads=2500, reused_steps=5, beside=I_DIAGNOSIS),
)
SETS = tuple(dataclasses.replace(row, not_earlier=tuple(r.folder for r in ROWS[i + 1:]))
             for i, row in enumerate(ROWS))
CHECKS: dict[str, Callable[[FrozenSet], None]] = {
    "unchanged since it was frozen": FrozenSet.check_frozen,
    "counts by language, kind and origin": FrozenSet.check_counts,
    "ids follow the source, sources used once per language": FrozenSet.check_ids_and_sources,
    "translations follow their originals": FrozenSet.check_translations_follow_originals,
    "text in the item's language": FrozenSet.check_text_language,
    "lessons asked about": FrozenSet.check_lessons_asked,
    "solution requests name exercise steps": FrozenSet.check_solution_steps_are_new,
    "no source of an earlier set reused": FrozenSet.check_no_source_reused,
    "value snippets print what expected says": FrozenSet.check_value_snippets,
}


@pytest.mark.parametrize("check", CHECKS.values(), ids=CHECKS.keys())
@pytest.mark.parametrize("frozen", SETS, ids=[s.folder for s in SETS])
def test_the_frozen_set_keeps_its_promises(frozen: FrozenSet,
                                           check: Callable[[FrozenSet], None]) -> None:
    check(frozen)
