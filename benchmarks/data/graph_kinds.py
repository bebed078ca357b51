"""Hand-written relation kinds for the graph retrieval benchmark (benchmarks.data.graph_data).

Each kind has several relationship-type spellings (one is drawn per user, as different models name
the same relation differently), destination values with their entity type, and first-person
questions written as people ask them. The questions are deliberately unrelated in wording: no
shared stem, no fixed pattern, so no rule on relation names maps a question to its kind. ``ask``
phrasings at even positions are the dev split's, odd positions the held-out split's; the generator
keeps only phrasings that share no word with the answering triple (names, relationship, types).
``shared``: phrasings that do share a word with it (kept only when they do). ``past``: questions
about an earlier version, asked with ``as_of`` (split like ``ask``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    key: str
    types: tuple[str, ...]
    values: tuple[tuple[str, str], ...]  # (destination name, destination entity type)
    ask: tuple[str, ...]
    shared: tuple[str, ...] = ()
    past: tuple[str, ...] = ()
    person: bool = False  # the destination is a person who gets relations of their own


K = Kind
KINDS: tuple[Kind, ...] = (
    K("pet", ("HAS_PET", "OWNS_PET", "PET"),
      (("Rex", "dog"), ("Mittens", "cat"), ("Kiwi", "parrot"), ("Biscuit", "rabbit"), ("Nemo", "goldfish"), ("Luna", "dog"), ("Shadow", "cat")),
      ("any furry companion waiting for me at home?", "what animal lives with me?", "who do I feed every morning and take to the vet?",
       "which creature keeps me company on the sofa?", "what's the name of the critter I look after?",
       "who greets me wagging or purring when I get back?"),
      ("do I have a pet?", "what is my {dtype} called?", "is {dest} mine?")),
    K("home", ("LIVES_IN", "RESIDES_IN", "HOME_CITY"),
      (("Denver", "city"), ("Porto", "city"), ("Lyon", "city"), ("Austin", "city"), ("Leeds", "city"), ("Kraków", "city"), ("Osaka", "city")),
      ("what place do I call home?", "where is my apartment located?", "which town would I write on a form as my address?",
       "where do I sleep at night, which town?", "where am I based these days?", "if you mailed me a postcard, where would it go?"),
      ("where do I live?", "which city is my home city?", "do I still live in {dest}?"),
      ("where was home for me at that point?", "which town was my address in back then?", "where was I based at the time?",
       "where did postcards reach me in those years?")),
    K("employer", ("WORKS_AT", "EMPLOYED_BY", "WORKS_FOR"),
      (("Globex", "company"), ("Initech", "company"), ("Umbrella Labs", "company"), ("Northwind", "company"), ("Stark Foods", "company"),
       ("Blue Harbor Bank", "company")),
      ("who pays my salary?", "which firm signs my paychecks?", "what organisation am I on the payroll of?",
       "where do I go for my nine-to-five?", "whose badge do I wear at the office?", "which business hired me?"),
      ("where do I work?", "which company employs me?", "am I still at {dest}?"),
      ("who was paying my wages in those days?", "which firm had me on staff then?", "whose office did I commute to at that time?",
       "which business had hired me back then?")),
    K("role", ("WORKS_AS", "HAS_JOB_TITLE", "OCCUPATION"),
      (("nurse", "occupation"), ("software engineer", "occupation"), ("accountant", "occupation"), ("architect", "occupation"),
       ("teacher", "occupation"), ("chef", "occupation")),
      ("what do I do for a living?", "what's my profession?", "how do I earn money?", "what's my line of work?",
       "what would I answer if someone asked my trade?", "what am I trained and paid to do?"),
      ("what is my occupation?", "what do I work as?", "am I a {dest}?"),
      ("what was I doing for a living back then?", "what was my trade in those years?", "how did I earn money at the time?",
       "what was my profession then?")),
    K("sister", ("HAS_SISTER", "SISTER", "SISTER_IS"),
      (("Ana", "person"), ("Jesica", "person"), ("Mei", "person"), ("Clara", "person"), ("Ingrid", "person")),
      ("who is my female sibling?", "which girl grew up in the same house as me?", "what's the name of my parents' daughter?",
       "who did I share a childhood bedroom with, the girl?", "who's the woman I call sis?", "who is the aunt of my kids?"),
      ("what is my sister's name?", "who is {dest} to me?"), person=True),
    K("brother", ("HAS_BROTHER", "BROTHER", "BROTHER_IS"),
      (("Tom", "person"), ("Diego", "person"), ("Kenji", "person"), ("Lars", "person"), ("Omar", "person")),
      ("who is my male sibling?", "which boy grew up alongside me?", "what's the name of my parents' son, not me?",
       "who's the guy I call bro?", "who is the uncle of my kids?", "who did I fight with over toys as a kid, the boy?"),
      ("what is my brother's name?", "is {dest} my brother?"), person=True),
    K("mother", ("HAS_MOTHER", "MOTHER", "CHILD_OF"),
      (("Helen", "person"), ("Rosa", "person"), ("Yuki", "person"), ("Margit", "person")),
      ("who gave birth to me?", "what's mom's name?", "who is the woman who raised me?", "who do I call on mother's day?",
       "what's the first name of my mum?", "who tucked me in when I was little, my mama?"),
      ("who is my mother?", "what is {dest}'s relation to me?"), person=True),
    K("spouse", ("MARRIED_TO", "HAS_SPOUSE", "PARTNER_OF"),
      (("Sam", "person"), ("Priya", "person"), ("Lukas", "person"), ("Noor", "person"), ("Elena", "person")),
      ("who did I wed?", "who is my other half?", "who's my husband or wife?", "who did I exchange rings with?",
       "who do I share my life and household with?", "who said yes when I proposed?"),
      ("who am I married to?", "who is my spouse?", "what is {dest} to me?"), person=True),
    K("friend", ("BEST_FRIEND", "BEST_FRIENDS_WITH", "CLOSE_FRIEND"),
      (("Jordan", "person"), ("Fatima", "person"), ("Hugo", "person"), ("Zoe", "person"), ("Ravi", "person")),
      ("who's my number one buddy?", "who do I trust most among my pals?", "who would I phone first at 3am in trouble?",
       "who's my bestie?", "who has been my ride-or-die since school?", "whom do I confide everything in?"),
      ("who is my best friend?", "is {dest} a close friend?"), person=True),
    K("car", ("DRIVES", "OWNS_CAR", "HAS_VEHICLE"),
      (("Toyota Corolla", "car"), ("Tesla Model 3", "car"), ("Volvo XC60", "car"), ("Honda Civic", "car"), ("Mini Cooper", "car")),
      ("what do I commute in?", "what's parked in my driveway?", "which automobile is mine?", "what are my wheels?",
       "what do I take on road trips?", "what would I fill up at the gas station?"),
      ("what car do I drive?", "do I still have the {dest}?"),
      ("what was parked in my driveway back then?", "which automobile was mine at the time?", "what did I commute in in those years?",
       "what were my wheels then?")),
    K("instrument", ("PLAYS", "PLAYS_INSTRUMENT", "MUSICIAN_ON"),
      (("piano", "instrument"), ("violin", "instrument"), ("guitar", "instrument"), ("cello", "instrument"), ("saxophone", "instrument")),
      ("what do I practise for music?", "which thing do I make music on?", "what do I perform at recitals?",
       "what do I strum or tinkle in the evenings?", "what do I take lessons on every Tuesday?", "what makes the noise my neighbours hear?"),
      ("which instrument do I play?", "do I play the {dest}?")),
    K("sport", ("PLAYS_SPORT", "PRACTICES", "COMPETES_IN"),
      (("tennis", "sport"), ("basketball", "sport"), ("rock climbing", "sport"), ("swimming", "sport"), ("volleyball", "sport")),
      ("how do I stay active on weekends?", "which game do I train for?", "what athletic activity am I into?",
       "what do I work up a sweat doing with my team?", "what's my exercise of choice?", "what do I do at the club on Saturdays?"),
      ("what sport do I play?", "do I practise {dest}?")),
    K("allergy", ("ALLERGIC_TO", "HAS_ALLERGY", "INTOLERANT_OF"),
      (("peanuts", "allergen"), ("shellfish", "allergen"), ("pollen", "allergen"), ("penicillin", "allergen"), ("gluten", "allergen")),
      ("what makes me break out in hives?", "what can't I touch without an epipen nearby?", "what triggers my reactions?",
       "what should a waiter know to keep out of my plate?", "what do I get sick from that others don't?", "what must my doctor never prescribe or feed me?"),
      ("what am I allergic to?", "do I have an allergy?", "is {dest} a problem for me?")),
    K("diet", ("FOLLOWS_DIET", "DIET", "EATS"),
      (("vegetarian", "diet"), ("vegan", "diet"), ("keto", "diet"), ("pescatarian", "diet"), ("halal", "diet")),
      ("what eating regime am I on?", "do I eat meat?", "what foods do I avoid by choice?", "how should a host cook for me?",
       "what's my way of eating?", "any menu restrictions for me at dinner parties?"),
      ("what diet do I follow?", "am I {dest}?")),
    K("food", ("FAVORITE_FOOD", "LOVES_EATING", "FAVOURITE_DISH"),
      (("ramen", "dish"), ("lasagna", "dish"), ("tacos", "dish"), ("paella", "dish"), ("dumplings", "dish"), ("curry", "dish")),
      ("what's my go-to meal?", "what would I order as a treat?", "what could I eat every single day?",
       "what's the thing I crave most at dinner?", "what should you cook for my birthday?", "which meal makes me happiest?"),
      ("what is my favorite food?", "do I love {dest}?")),
    K("university", ("STUDIED_AT", "GRADUATED_FROM", "ALUMNUS_OF"),
      (("MIT", "university"), ("University of Porto", "university"), ("ETH Zurich", "university"), ("Kyoto University", "university"),
       ("McGill", "university")),
      ("where did I get my degree?", "which college did I attend?", "where did I go after high school?",
       "what's my alma mater?", "where did I earn my diploma?", "which campus did I spend my twenties on?"),
      ("where did I study?", "did I graduate from {dest}?")),
    K("birthplace", ("BORN_IN", "BIRTHPLACE", "NATIVE_OF"),
      (("Seville", "city"), ("Manchester", "city"), ("Nagoya", "city"), ("Gdańsk", "city"), ("Recife", "city")),
      ("where did I come into the world?", "what's my hometown?", "where was I delivered as a baby?",
       "where do I originally hail from?", "which town is on my birth certificate?", "where did my life start?"),
      ("where was I born?", "is {dest} my birthplace?")),
    K("language", ("SPEAKS", "SPEAKS_LANGUAGE", "FLUENT_IN"),
      (("Portuguese", "language"), ("Japanese", "language"), ("German", "language"), ("Arabic", "language"), ("Polish", "language")),
      ("what tongue can I converse in besides English?", "which foreign words do I understand?", "what can I chat in abroad?",
       "which second language did I learn?", "what can I read subtitles-free?", "in which idiom could I order dinner overseas?"),
      ("what language do I speak?", "do I speak {dest}?")),
    K("team", ("SUPPORTS", "FAN_OF", "ROOTS_FOR"),
      (("Benfica", "football club"), ("Arsenal", "football club"), ("Lakers", "basketball team"), ("Yankees", "baseball team"),
       ("Bayern", "football club")),
      ("who do I cheer on?", "whose matches do I never miss?", "whose jersey hangs in my closet?",
       "whose scores do I check every weekend?", "who do I scream at the TV for?", "whose games do I buy season tickets for?"),
      ("which team do I support?", "am I a {dest} fan?")),
    K("doctor", ("HAS_DOCTOR", "SEES_PHYSICIAN", "PATIENT_OF"),
      (("Dr. Patel", "doctor"), ("Dr. Okafor", "doctor"), ("Dr. Lindqvist", "doctor"), ("Dr. Moreau", "doctor")),
      ("who do I book appointments with when I'm sick?", "who checks my health?", "whose clinic do I visit for checkups?",
       "who writes my prescriptions?", "who takes my blood pressure every year?", "who is my GP?"),
      ("who is my doctor?", "do I see {dest}?")),
    K("gym", ("MEMBER_OF", "GOES_TO_GYM", "TRAINS_AT"),
      (("FitHub", "gym"), ("Iron Temple", "gym"), ("PureGym", "gym"), ("CrossBox", "gym")),
      ("where do I work out?", "where do I lift weights?", "whose membership card is in my wallet for exercise?",
       "where do I go for a treadmill session?", "where do I do my squats?", "where do I pay a monthly fee to get fit?"),
      ("which gym do I go to?", "am I a member of {dest}?"),
      ("where did I work out back then?", "where was I lifting weights in those years?", "where did I go for treadmill sessions then?",
       "whose membership did I have for exercise at the time?")),
    K("band", ("LISTENS_TO", "FAN_OF_BAND", "LOVES_MUSIC_OF"),
      (("Radiohead", "band"), ("BTS", "band"), ("Coldplay", "band"), ("Metallica", "band"), ("ABBA", "band")),
      ("what's on my headphones all day?", "which group do I go to concerts for?", "whose albums do I own on vinyl?",
       "who's my favourite artist to stream?", "whose tour tickets do I queue for?", "whose songs do I sing in the shower?"),
      ("what music do I listen to?", "do I like {dest}?")),
    K("bank", ("BANKS_WITH", "HAS_ACCOUNT_AT", "CUSTOMER_OF"),
      (("Chase", "bank"), ("Santander", "bank"), ("Revolut", "bank"), ("ING", "bank")),
      ("where do I keep my savings?", "which institution holds my money?", "who issued my debit card?",
       "where does my paycheck get deposited?", "who would I call about a lost card?", "whose app do I check my balance in?"),
      ("which bank do I use?", "do I have an account with {dest}?")),
    K("phone", ("USES_PHONE", "OWNS_PHONE", "HAS_MOBILE"),
      (("iPhone 15", "smartphone"), ("Pixel 8", "smartphone"), ("Galaxy S23", "smartphone"), ("Fairphone 5", "smartphone")),
      ("what handset do I carry?", "what's my mobile device?", "what do I text from?", "which gadget is always in my pocket?",
       "what do I take selfies with?", "what device wakes me up with an alarm?"),
      ("what phone do I have?", "do I use a {dest}?"),
      ("what handset was I carrying back then?", "which gadget was in my pocket at that time?", "what did I text from in those years?",
       "what device did I take selfies with then?")),
    K("drink", ("DRINKS", "PREFERS_DRINK", "FAVORITE_BEVERAGE"),
      (("espresso", "beverage"), ("green tea", "beverage"), ("oat latte", "beverage"), ("kombucha", "beverage"), ("yerba mate", "beverage")),
      ("what do I sip every morning?", "what should you bring me from the café?", "what's in my mug at breakfast?",
       "what keeps me awake at the desk?", "what's my usual order at the coffee shop?", "what do I brew first thing?"),
      ("what do I drink?", "do I like {dest}?")),
    K("neighbour", ("NEIGHBOR_OF", "LIVES_NEXT_TO", "NEXT_DOOR_TO"),
      (("Mr. Jenkins", "person"), ("Mrs. Kowalski", "person"), ("Beatriz", "person"), ("Olaf", "person")),
      ("whose house is beside mine?", "who waters my plants when I travel, from the adjacent flat?", "who's on the other side of my wall?",
       "who do I borrow sugar from?", "whose dog barks over my fence?", "who shares my hallway?"),
      ("who is my neighbor?", "is {dest} my neighbour?"), person=True),
    K("child", ("HAS_CHILD", "PARENT_OF", "HAS_KID"),
      (("Mia", "person"), ("Leo", "person"), ("Aiko", "person"), ("Noah", "person")),
      ("who did I raise?", "who calls me dad or mom?", "who do I pick up from school?", "what's my son or daughter called?",
       "who did I become a parent to?", "whose homework do I help with every evening?"),
      ("who is my child?", "is {dest} my kid?"), person=True),
    K("trip", ("PLANS_TRIP_TO", "TRAVELING_TO", "VACATIONING_IN"),
      (("Iceland", "country"), ("Bali", "island"), ("Patagonia", "region"), ("Morocco", "country"), ("Sicily", "island")),
      ("where am I heading on holiday?", "what's my next getaway destination?", "where did I book flights to for the summer?",
       "where am I going on my time off?", "what's my upcoming escape?", "where am I packing my suitcase for?"),
      ("where am I traveling?", "am I going to {dest}?")),
    K("hobby", ("ENJOYS", "HOBBY", "PASSIONATE_ABOUT"),
      (("painting", "hobby"), ("chess", "hobby"), ("gardening", "hobby"), ("pottery", "hobby"), ("birdwatching", "hobby")),
      ("what do I do in my free time?", "how do I unwind after work?", "what's my pastime?", "what keeps me busy on lazy Sundays?",
       "what relaxing activity am I into?", "what do I lose track of time doing?"),
      ("what is my hobby?", "do I enjoy {dest}?")),
    K("manager", ("REPORTS_TO", "MANAGED_BY", "HAS_BOSS"),
      (("Karen Liu", "person"), ("Mark Evans", "person"), ("Aisha Bello", "person"), ("Pedro Alves", "person")),
      ("who's my supervisor?", "who do I answer to at the office?", "who approves my vacation days?", "who does my performance review?",
       "who sits above me in the org chart?", "who signs off on my expenses?"),
      ("who is my boss?", "do I report to {dest}?"), person=True),
    K("streaming", ("SUBSCRIBES_TO", "HAS_SUBSCRIPTION", "PAYS_FOR"),
      (("Netflix", "streaming service"), ("Spotify", "streaming service"), ("Disney+", "streaming service"), ("HBO Max", "streaming service")),
      ("what do I watch series on?", "which platform charges me monthly?", "what app do I binge shows in?",
       "where do I queue up movies at night?", "which service bills my card every month?", "what do I stream on the couch?"),
      ("what subscription do I have?", "do I pay for {dest}?")),
)

#: filler relations of the user: plausible, never asked about
FILLERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("KNOWS", "person", ("Alex Kim", "Bruno Costa", "Chloe Martin", "Dev Shah", "Emma Brown", "Felix Wagner", "Grace Lee", "Hana Sato",
                         "Ivan Petrov", "Julia Rossi", "Kai Müller", "Lena Fischer", "Marco Bianchi", "Nina Novak", "Oscar Silva",
                         "Paula Gómez", "Quinn Walsh", "Rita Sousa", "Sven Berg", "Tara Singh", "Uma Rao", "Victor Hugo Lima")),
    ("VISITED", "city", ("Berlin", "Rome", "Lisbon", "Prague", "Vienna", "Madrid", "Dublin", "Oslo", "Athens", "Istanbul", "Cairo",
                         "Bangkok", "Seoul", "Toronto", "Lima", "Hanoi")),
    ("READ", "book", ("Dune", "Middlemarch", "Beloved", "The Hobbit", "Sapiens", "Educated", "Circe", "Normal People", "Klara and the Sun",
                      "The Road")),
    ("WATCHED", "film", ("Inception", "Parasite", "Amélie", "Arrival", "Coco", "Heat", "Alien", "Up", "Roma", "Casablanca")),
    ("ATTENDED", "event", ("Web Summit", "Glastonbury", "a friend's wedding", "Comic-Con", "the marathon expo", "PyCon", "a TED talk",
                           "the book fair")),
    ("OWNS", "household item", ("blender", "standing desk", "espresso machine", "robot vacuum", "air fryer", "sewing machine", "telescope",
                                "3D printer")),
    ("FOLLOWS", "podcast", ("Radiolab", "Serial", "Hardcore History", "The Daily", "99% Invisible", "Planet Money")),
    ("LIKES", "color", ("teal", "burgundy", "mustard yellow", "navy")),
)

#: what a person near the user gets (their own relations, the distractors and the multi-hop material)
PERSON_FACTS: tuple[tuple[str, str], ...] = (("LIVES_IN", "city"), ("WORKS_AT", "company"), ("WORKS_AS", "occupation"), ("HAS_PET", "pet"),
                                             ("MARRIED_TO", "person"), ("STUDIED_AT", "university"), ("HAS_SISTER", "person"))

CITY_COUNTRY = {"Denver": "United States", "Porto": "Portugal", "Lyon": "France", "Austin": "United States", "Leeds": "England",
                "Kraków": "Poland", "Osaka": "Japan", "Seville": "Spain", "Manchester": "England", "Nagoya": "Japan", "Gdańsk": "Poland",
                "Recife": "Brazil", "Boston": "United States", "Turin": "Italy", "Bergen": "Norway", "Tucson": "United States"}
#: where the organisations are (companies: BASED_IN, universities: LOCATED_IN)
ORG_CITY = {"Globex": "Boston", "Initech": "Austin", "Umbrella Labs": "Turin", "Northwind": "Bergen", "Stark Foods": "Leeds",
            "Blue Harbor Bank": "Tucson", "MIT": "Boston", "University of Porto": "Porto", "ETH Zurich": "Zurich",
            "Kyoto University": "Kyoto", "McGill": "Montreal"}
COMPANIES = ("Globex", "Initech", "Umbrella Labs", "Northwind", "Stark Foods", "Blue Harbor Bank")
UNIVERSITIES = ("MIT", "University of Porto", "ETH Zurich", "Kyoto University", "McGill")
#: the pets of the people around the user (the user's own come from the "pet" kind)
OTHER_PETS = (("Buddy", "dog"), ("Tiger", "cat"), ("Coco", "parrot"), ("Pepper", "dog"), ("Oreo", "rabbit"), ("Bubbles", "goldfish"))
EXTRA_PEOPLE = ("Ines", "Wen", "Bastian", "Chidi", "Mara", "Teo", "Elsa", "Yusuf", "Greta", "Ravi Menon", "Sofia", "Pavel")

#: two-hop questions naming a person (split like ``ask``): (first hop, second hop, phrasings with {p})
CHAINS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("WORKS_AT", "BASED_IN", ("In which city is {p}'s employer headquartered?", "Where does the firm {p} works for have its head office?",
                              "{p}'s company: which town is it run from?", "Which city hosts the business that pays {p}?")),
    ("LIVES_IN", "LOCATED_IN", ("Which country does {p} live in?", "In what nation is {p}'s home town?",
                                "{p} resides in which country?", "What country would {p}'s address be in?")),
    ("MARRIED_TO", "WORKS_AS", ("What does {p}'s spouse do for a living?", "What is the job of the person {p} married?",
                                "How does {p}'s husband or wife earn money?", "What's the profession of {p}'s partner?")),
    ("STUDIED_AT", "LOCATED_IN", ("In what city did {p} go to university?", "Where is the college {p} graduated from?",
                                  "Which town is {p}'s alma mater in?", "In which city did {p} study?")),
    ("HAS_SISTER", "LIVES_IN", ("Where does {p}'s sister live?", "Which city is {p}'s sister based in?",
                                "Where can {p}'s sister be found these days?", "What town is home to {p}'s sibling?")),
)
