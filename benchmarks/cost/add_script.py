"""The scripted conversation replayed by the add-cost benchmark: 20 user messages over five sessions
(Maya moves from Boston to Denver, changes jobs, loses a dog, adopts a cat, changes her diet), each
with the tool replies a good model would give. ``retire`` lists the existing relations the message
contradicts (answered only when the invalidation stage shows them); ``memory`` says which existing
memory facts a new fact updates or deletes (matched by a phrase of their text).
"""

from __future__ import annotations

from dataclasses import dataclass, field

USER = "maya"


@dataclass
class Step:
    at: str
    text: str
    facts: list[str]
    entities: list[tuple[str, str]]
    relations: list[tuple[str, str, str]]
    retire: list[tuple[str, str, str]] = field(default_factory=list)
    updates: dict[str, str] = field(default_factory=dict)  # phrase of an existing memory -> new fact replacing it
    deletes: list[str] = field(default_factory=list)  # phrases of existing memories the message makes false


SCRIPT = [
    Step("2024-01-10T09:00:00Z", "Hi! I'm Maya. I live in Boston and I work as a nurse at Mass General.",
         ["Name is Maya", "Lives in Boston", "Works as a nurse at Mass General"],
         [(USER, "person"), ("Boston", "city"), ("Mass General", "organization"), ("nurse", "occupation")],
         [(USER, "LIVES_IN", "Boston"), (USER, "WORKS_AT", "Mass General"), (USER, "HAS_OCCUPATION", "nurse")]),
    Step("2024-01-10T09:05:00Z", "I have a golden retriever called Biscuit.",
         ["Has a golden retriever named Biscuit"],
         [(USER, "person"), ("Biscuit", "animal"), ("golden retriever", "breed")],
         [(USER, "OWNS", "Biscuit"), ("Biscuit", "IS_A", "golden retriever")]),
    Step("2024-01-10T09:10:00Z", "I love sushi, but I'm allergic to shellfish.",
         ["Loves sushi", "Is allergic to shellfish"],
         [(USER, "person"), ("sushi", "food"), ("shellfish", "food")],
         [(USER, "LOVES", "sushi"), (USER, "ALLERGIC_TO", "shellfish")]),
    Step("2024-01-10T09:15:00Z", "My sister Ana lives in Chicago.",
         ["Has a sister named Ana", "Ana lives in Chicago"],
         [(USER, "person"), ("Ana", "person"), ("Chicago", "city")],
         [(USER, "SISTER_OF", "Ana"), ("Ana", "LIVES_IN", "Chicago")]),
    Step("2024-01-10T09:20:00Z", "I play tennis every weekend.",
         ["Plays tennis every weekend"], [(USER, "person"), ("tennis", "sport")], [(USER, "PLAYS", "tennis")]),
    Step("2024-03-05T18:00:00Z", "Big news: Denver Health offered me a charge nurse job!",
         ["Was offered a charge nurse job at Denver Health"],
         [(USER, "person"), ("Denver Health", "organization")], [(USER, "WAS_OFFERED_JOB_AT", "Denver Health")]),
    Step("2024-03-05T18:05:00Z", "I accepted, so I'm moving to Denver next month.",
         ["Is moving to Denver in April 2024"], [(USER, "person"), ("Denver", "city")], [(USER, "MOVING_TO", "Denver")]),
    Step("2024-04-20T10:00:00Z", "I moved to Denver last week, the apartment is great.",
         ["Lives in Denver since April 2024"], [(USER, "person"), ("Denver", "city")], [(USER, "LIVES_IN", "Denver")],
         retire=[(USER, "LIVES_IN", "Boston"), (USER, "MOVING_TO", "Denver")], updates={"Lives in Boston": "Lives in Denver since April 2024"}),
    Step("2024-04-20T10:05:00Z", "I left Mass General; I'm a charge nurse at Denver Health now.",
         ["Works as a charge nurse at Denver Health"],
         [(USER, "person"), ("Denver Health", "organization"), ("charge nurse", "occupation")],
         [(USER, "WORKS_AT", "Denver Health"), (USER, "HAS_OCCUPATION", "charge nurse")],
         retire=[(USER, "WORKS_AT", "Mass General"), (USER, "HAS_OCCUPATION", "nurse")],
         updates={"nurse at Mass General": "Works as a charge nurse at Denver Health"}),
    Step("2024-04-20T10:10:00Z", "Biscuit loves the snow here.",
         ["Biscuit loves the snow in Denver"], [("Biscuit", "animal"), ("snow", "weather")], [("Biscuit", "LOVES", "snow")]),
    Step("2024-04-20T10:15:00Z", "I stopped playing tennis; I've taken up skiing instead.",
         ["Took up skiing", "No longer plays tennis"], [(USER, "person"), ("tennis", "sport"), ("skiing", "sport")],
         [(USER, "PLAYS", "skiing")], retire=[(USER, "PLAYS", "tennis")], deletes=["Plays tennis"]),
    Step("2024-07-02T20:00:00Z", "We adopted a cat named Miso!",
         ["Adopted a cat named Miso"], [(USER, "person"), ("Miso", "animal")], [(USER, "OWNS", "Miso")]),
    Step("2024-07-02T20:05:00Z", "I'm vegetarian now, so no more sushi for me.",
         ["Is vegetarian", "No longer eats sushi"], [(USER, "person"), ("vegetarian diet", "diet"), ("sushi", "food")],
         [(USER, "FOLLOWS", "vegetarian diet")], retire=[(USER, "LOVES", "sushi")], deletes=["Loves sushi"]),
    Step("2024-07-02T20:10:00Z", "Ana is coming to visit me in August.",
         ["Ana will visit in August 2024"], [("Ana", "person"), (USER, "person")], [("Ana", "WILL_VISIT", USER)]),
    Step("2024-07-02T20:15:00Z", "I'm learning Spanish on Duolingo.",
         ["Is learning Spanish on Duolingo"], [(USER, "person"), ("Spanish", "language"), ("Duolingo", "app")],
         [(USER, "LEARNING", "Spanish"), (USER, "USES", "Duolingo")]),
    Step("2024-10-15T08:00:00Z", "Sadly, Biscuit passed away in September.",
         ["Biscuit died in September 2024"], [(USER, "person"), ("Biscuit", "animal")], [],
         retire=[(USER, "OWNS", "Biscuit")], updates={"golden retriever named Biscuit": "Biscuit died in September 2024"}),
    Step("2024-10-15T08:05:00Z", "I started a master's in public health at CU Denver.",
         ["Studies for a master's in public health at CU Denver"],
         [(USER, "person"), ("CU Denver", "organization"), ("public health", "field")],
         [(USER, "STUDIES_AT", "CU Denver"), (USER, "STUDIES", "public health")]),
    Step("2024-10-15T08:10:00Z", "My favourite coffee shop is Little Owl.",
         ["Favourite coffee shop is Little Owl"], [(USER, "person"), ("Little Owl", "place")], [(USER, "FAVOURITE_CAFE", "Little Owl")]),
    Step("2024-10-15T08:15:00Z", "Ana moved to Seattle last month.",
         ["Ana lives in Seattle since September 2024"], [("Ana", "person"), ("Seattle", "city")], [("Ana", "LIVES_IN", "Seattle")],
         retire=[("Ana", "LIVES_IN", "Chicago")], updates={"Ana lives in Chicago": "Ana lives in Seattle since September 2024"}),
    Step("2024-10-15T08:20:00Z", "These days I prefer tea to coffee.",
         ["Prefers tea to coffee"], [(USER, "person"), ("tea", "drink"), ("coffee", "drink")], [(USER, "PREFERS", "tea")]),
]  # fmt: skip
