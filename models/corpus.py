"""Deterministic generator of the English training text for the shipped models.

Everything here is written by hand: a broad lexicon of real English words and a
set of sentence builders. The text is made to hold the structure that makes
attention heads worth looking at:

* subject-verb number agreement across distracting prepositional phrases and
  relative clauses ("the keys to the old cabinet are on the table ."),
* pronouns that agree with an earlier name or noun ("Mary lost her keys
  because she was late ."),
* the indirect-object pattern with a repeated name ("when Mary and John went to
  the store , John gave a drink to Mary ."),
* repeated phrases for copying and induction heads,
* everyday sentences over a lexicon of well over 1,500 word types.

Lines are words separated by single spaces; punctuation (". , ? !") is its own
token and contractions keep their apostrophe ("didn't"). Names, "I", days and
months are capitalised; the tokenizer lowercases, and :func:`lexicon` lists the
lowercased word types.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable
from functools import lru_cache


def _words(text: str) -> list[str]:
    return text.split()


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _pairs(text: str) -> list[tuple[str, str]]:
    """Parse "cat mouse:mice" into [("cat", "cats"), ("mouse", "mice")]."""
    out = []
    for item in text.split():
        singular, _, plural = item.partition(":")
        out.append((singular, plural or _plural(singular)))
    return out


def _verbs(text: str) -> dict[str, tuple[str, str, str, str]]:
    """Parse lines "base third past ing" into {base: (base, third, past, ing)}."""
    table = {}
    for line in text.strip().splitlines():
        base, third, past, ing = line.split()
        table[base] = (base, third, past, ing)
    return table


# --------------------------------------------------------------------------- lexicon

MALE_NAMES = _words(
    """James John Robert Michael William David Richard Joseph Thomas Charles Daniel
    Matthew Anthony Mark Paul Steven Andrew Peter George Edward Brian Kevin Jason Ryan
    Jacob Gary Eric Stephen Jonathan Frank Scott Justin Ben Sam Tom Jack Harry Oliver
    Henry Leo Max Adam Luke Noah Ethan Liam Oscar Simon Martin Victor"""
)
FEMALE_NAMES = _words(
    """Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Nancy
    Lisa Emily Emma Olivia Sophia Anna Julia Laura Rachel Rebecca Amy Kate Alice Lucy
    Grace Chloe Hannah Ella Mia Zoe Ruth Helen Maria Sophie Claire Jane Diana Nora Lily
    Amelia Ava Isabella Charlotte Megan"""
)
NAMES = MALE_NAMES + FEMALE_NAMES

MALE_PEOPLE = _pairs(
    """man:men boy king father brother uncle son grandfather husband prince
    gentleman:gentlemen nephew grandson"""
)
FEMALE_PEOPLE = _pairs(
    """woman:women girl queen mother sister aunt daughter grandmother wife:wives
    princess lady niece granddaughter"""
)
PROFESSIONS = _pairs(
    """teacher doctor nurse farmer baker cook chef pilot officer firefighter dentist
    lawyer judge artist writer painter actor musician scientist engineer builder
    carpenter plumber mechanic waiter cashier clerk manager soldier sailor
    fisherman:fishermen gardener librarian professor principal secretary reporter
    photographer author poet banker hunter coach"""
)
OTHER_PEOPLE = _pairs(
    """child:children baby friend neighbor student kid parent cousin guest stranger
    visitor player singer dancer driver worker tourist customer passenger captain
    leader classmate"""
)
PEOPLE = MALE_PEOPLE + FEMALE_PEOPLE + PROFESSIONS + OTHER_PEOPLE
ANIMALS = _pairs(
    """dog cat bird fish:fish horse cow pig sheep:sheep goat chicken duck rabbit
    mouse:mice rat frog snake lion tiger bear wolf:wolves fox elephant monkey giraffe
    zebra deer:deer owl eagle bee ant spider butterfly turtle whale dolphin shark
    kitten puppy pony donkey camel squirrel penguin parrot goose:geese hen animal
    insect bat lamb"""
)
OBJECTS = _pairs(
    """key book pen pencil cup glass bottle plate bowl spoon fork knife:knives box bag
    basket lamp clock phone computer door window wall roof mirror picture painting
    photo towel blanket pillow carpet curtain toy ball doll kite ticket letter card
    gift coin wallet watch hat coat shirt dress shoe sock jacket sweater umbrella
    ring necklace glove bucket brush candle map newspaper magazine notebook backpack
    ruler eraser calculator marker crayon keyboard screen camera radio television
    kettle pot pan jar hammer rope ladder fence gate tool stone rock stick
    leaf:leaves flower tree plant seed envelope button belt scarf:scarves
    suitcase basketball football puzzle game drum guitar piano violin flute
    balloon bell boot"""
)
FURNITURE = _pairs(
    """table chair desk bed sofa shelf:shelves cabinet drawer bench stool couch
    cupboard mat counter floor"""
)
VEHICLES = _words("car bus train truck boat plane ship bike bicycle taxi")
VEHICLE_PAIRS = [(v, _plural(v)) for v in VEHICLES]
PLACES = _pairs(
    """park store shop school library kitchen garden beach market museum hospital
    station office bank church restaurant cafe zoo farm forest river lake mountain
    hill village city:cities town street road bridge airport hotel theater cinema
    stadium gym playground classroom bathroom bedroom hall yard house island field
    castle bakery pool garage corner supermarket factory"""
)
FOODS = _pairs(
    """apple banana orange egg sandwich cookie cake pie carrot potato:potatoes
    tomato:tomatoes onion lemon peach pear grape strawberry cherry pizza hamburger
    sausage biscuit candy muffin pancake doughnut nut bean pea pepper melon
    mango:mangoes peanut cucumber"""
)
MASS_FOODS = _words(
    """bread rice milk water juice tea coffee soup cheese butter sugar salt honey meat
    pasta cereal chocolate jam yogurt salad popcorn lemonade toast"""
)
DRINKS = _words("milk water juice tea coffee lemonade")
MEALS = _words("breakfast lunch dinner")
BODY = _pairs(
    """head hand foot:feet arm leg eye ear nose mouth tooth:teeth finger toe knee
    shoulder neck face heart stomach lip tongue thumb elbow chin cheek wrist ankle
    brain back"""
)
COLORS = _words("red blue green yellow orange purple pink brown black white gray gold silver")
WEATHER = _words("sunny rainy cloudy windy snowy foggy stormy cold hot warm cool wet dry")
WEATHER_NOUNS = _words(
    "rain snow wind storm sun cloud clouds fog thunder lightning weather sky ice"
)
DAYS = _words("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")
MONTHS = _words(
    """January February March April May June July August September October November
    December"""
)
DAY_PARTS = _words("morning afternoon evening night")
SEASONS = _words("spring summer autumn winter")
TIME_WORDS = _words(
    """today tomorrow yesterday tonight week weekend month year day hour minute
    second noon midnight birthday holiday vacation time moment"""
)
NUMBERS = _words(
    """two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty"""
)
OTHER_NUMBERS = _words(
    """zero one thirty forty fifty sixty seventy eighty ninety hundred thousand
    million first third fourth fifth sixth seventh eighth ninth tenth last next"""
)
HOURS = _words("one two three four five six seven eight nine ten eleven twelve")
SUBJECTS = _words("math science history art music English geography reading spelling")
SPORTS = _words("soccer tennis basketball football baseball golf hockey volleyball chess")
INSTRUMENTS = _words("piano guitar violin drum flute trumpet")

PERSON_ADJS = _words(
    """happy sad angry tired hungry thirsty busy late early sick healthy kind nice
    friendly funny serious smart clever brave shy proud careful calm nervous afraid
    scared excited bored lonely curious polite rude honest silly wise lucky sleepy
    quiet young old tall short strong weak rich poor ready sorry glad hopeful
    worried upset cheerful gentle lazy famous beautiful pretty handsome"""
)
THING_ADJS = _words(
    """big small large little long new old heavy light soft hard clean dirty empty
    full open closed broken fresh sweet sour bitter salty delicious tasty expensive
    cheap wide narrow deep shallow thin thick round square flat sharp smooth rough
    tiny huge bright dark shiny dusty warm cold wet dry strange special
    lovely wonderful terrible beautiful ugly simple plain modern ancient
    quick lazy loud noisy"""
)
OTHER_ADJS = _words(
    """good bad great fine easy difficult important interesting boring dangerous safe
    different same real true false wrong right sure free whole main public private
    fair whole horrible strange wild cute awful perfect correct favorite"""
)
ADJECTIVES = PERSON_ADJS + THING_ADJS + OTHER_ADJS
# Adjectives that sound wrong before a noun ("the afraid boy").
PREDICATIVE_ONLY = {"afraid", "glad", "sorry", "ready"}
ATTRIBUTIVE_PERSON_ADJS = [a for a in PERSON_ADJS if a not in PREDICATIVE_ONLY]
ADVERBS = _words(
    """quickly slowly quietly loudly carefully happily sadly easily badly well softly
    gently politely angrily proudly bravely kindly nearly suddenly finally together
    outside inside everywhere often always never sometimes usually rarely"""
)
FUNCTION_WORDS = _words(
    """the a an this that these those my your his her its our their some any every
    each all both many much more most few no not and or but so because if when while
    after before until since than then as of to in on at by for with from about into
    onto over under behind between near beside above below across through around
    along against without during up down out off I me you he him she it we us they
    them myself yourself himself herself itself ourselves themselves mine yours hers
    ours theirs who whom whose which what where why how there here yes please thank
    thanks hello goodbye sorry okay oh is are was were am be been being do does did
    have has had will would can could shall should may might must very really too
    also again already still just almost only even quite soon now later maybe
    perhaps once twice yet away home ago"""
)
CONTRACTIONS = _words(
    """didn't don't doesn't can't won't isn't aren't wasn't weren't haven't hasn't
    couldn't wouldn't shouldn't it's I'm you're he's she's we're they're that's
    there's let's I'll you'll we'll I've you've what's where's o'clock"""
)

VERBS = _verbs(
    """
    walk walks walked walking
    run runs ran running
    jump jumps jumped jumping
    swim swims swam swimming
    sleep sleeps slept sleeping
    sing sings sang singing
    dance dances danced dancing
    laugh laughs laughed laughing
    cry cries cried crying
    smile smiles smiled smiling
    play plays played playing
    work works worked working
    wait waits waited waiting
    sit sits sat sitting
    stand stands stood standing
    read reads read reading
    write writes wrote writing
    cook cooks cooked cooking
    talk talks talked talking
    listen listens listened listening
    study studies studied studying
    rest rests rested resting
    shout shouts shouted shouting
    climb climbs climbed climbing
    fly flies flew flying
    fall falls fell falling
    arrive arrives arrived arriving
    leave leaves left leaving
    come comes came coming
    go goes went going
    grow grows grew growing
    win wins won winning
    lose loses lost losing
    eat eats ate eating
    drink drinks drank drinking
    like likes liked liking
    love loves loved loving
    see sees saw seeing
    want wants wanted wanting
    need needs needed needing
    find finds found finding
    carry carries carried carrying
    open opens opened opening
    close closes closed closing
    clean cleans cleaned cleaning
    wash washes washed washing
    paint paints painted painting
    build builds built building
    buy buys bought buying
    sell sells sold selling
    cut cuts cut cutting
    hold holds held holding
    watch watches watched watching
    help helps helped helping
    visit visits visited visiting
    call calls called calling
    meet meets met meeting
    know knows knew knowing
    follow follows followed following
    thank thanks thanked thanking
    ask asks asked asking
    teach teaches taught teaching
    miss misses missed missing
    hug hugs hugged hugging
    move moves moved moving
    drop drops dropped dropping
    fix fixes fixed fixing
    break breaks broke breaking
    push pushes pushed pushing
    pull pulls pulled pulling
    bring brings brought bringing
    take takes took taking
    use uses used using
    keep keeps kept keeping
    give gives gave giving
    hand hands handed handing
    pass passes passed passing
    send sends sent sending
    show shows showed showing
    throw throws threw throwing
    offer offers offered offering
    lend lends lent lending
    bake bakes baked baking
    share shares shared sharing
    make makes made making
    get gets got getting
    put puts put putting
    say says said saying
    tell tells told telling
    think thinks thought thinking
    feel feels felt feeling
    look looks looked looking
    seem seems seemed seeming
    hear hears heard hearing
    try tries tried trying
    start starts started starting
    stop stops stopped stopping
    finish finishes finished finishing
    learn learns learned learning
    forget forgets forgot forgetting
    remember remembers remembered remembering
    live lives lived living
    travel travels traveled traveling
    drive drives drove driving
    ride rides rode riding
    catch catches caught catching
    kick kicks kicked kicking
    hit hits hit hitting
    draw draws drew drawing
    plant plants planted planting
    pick picks picked picking
    fill fills filled filling
    cross crosses crossed crossing
    enter enters entered entering
    return returns returned returning
    answer answers answered answering
    feed feeds fed feeding
    chase chases chased chasing
    bite bites bit biting
    hide hides hid hiding
    search searches searched searching
    spend spends spent spending
    pay pays paid paying
    order orders ordered ordering
    borrow borrows borrowed borrowing
    check checks checked checking
    count counts counted counting
    explain explains explained explaining
    wear wears wore wearing
    begin begins began beginning
    turn turns turned turning
    wake wakes woke waking
    worry worries worried worrying
    hope hopes hoped hoping
    smell smells smelled smelling
    taste tastes tasted tasting
    touch touches touched touching
    kiss kisses kissed kissing
    dream dreams dreamed dreaming
    shine shines shone shining
    rain rains rained raining
    snow snows snowed snowing
    blow blows blew blowing
    fight fights fought fighting
    shop shops shopped shopping
    cheer cheers cheered cheering
    clap claps clapped clapping
    knock knocks knocked knocking
    bark barks barked barking
    hunt hunts hunted hunting
    wave waves waved waving
    prepare prepares prepared preparing
    pack packs packed packing
    pour pours poured pouring
    mix mixes mixed mixing
    jog jogs jogged jogging
    whisper whispers whispered whispering
    scream screams screamed screaming
    relax relaxes relaxed relaxing
    practice practices practiced practicing
    """
)

# Verbs by the arguments they take (base forms, all keys of VERBS).
INTRANSITIVE = _words(
    """walk run jump swim sleep sing dance laugh cry smile play work wait sit stand
    read write cook talk listen study rest shout climb jog relax practice dream
    cheer whisper"""
)
ANIMAL_INTRANSITIVE = _words("walk run jump swim sleep play wait sit rest climb hide")
MOTION = _words("walk run drive ride travel go jog return")
THING_VERBS = _words(
    """find carry open clean wash paint buy sell hold move drop fix break push pull
    bring take use keep want need like see lose watch share draw fill pick check
    count hide pack borrow touch close"""
)
FOOD_VERBS = _words("eat buy want like share order bring taste smell cut cook make")
PERSON_VERBS = _words(
    """help visit call meet see like love watch follow thank ask teach miss hug know
    find wake hear chase"""
)
ANIMATE_RC_VERBS = _words("like love watch help follow know see feed visit meet miss")
THING_RC_VERBS = _words("like want need use keep carry buy find hold clean")
GIVE_VERBS = _words("give hand pass send show throw bring offer lend sell")
GIVEABLE = _words(
    """drink book ball gift letter apple pen cake flower ticket card toy key map
    sandwich cookie photo coin umbrella orange banana bottle cup hat pencil notebook
    kite camera guitar bag basket candle"""
)
CONTAINERS = _words("box bag basket bucket drawer cupboard pot jar backpack suitcase bowl")
RELATIVES = _words(
    "mother father sister brother aunt uncle friend cousin grandmother grandfather teacher"
)
OBJ_PRONOUNS = _words("him her them me us you")
SUBJ_PRONOUNS = ["I", "you", "he", "she", "we", "they"]

# Sentences used verbatim now and then, including classic classroom examples.
FIXED_SENTENCES = [
    "the cat sat on the mat .",
    "the quick brown fox jumps over the lazy dog .",
    "the animal didn't cross the street because it was too tired .",
    "she gave him the book .",
    "the students are reading in the library .",
    "the sun is shining and the sky is blue .",
    "there are seven days in a week .",
    "there are twelve months in a year .",
    "there are sixty minutes in an hour .",
    "water is wet and ice is cold .",
    "I think , therefore I am .",
    "an apple a day keeps the doctor away .",
    "it's raining cats and dogs !",
    "practice makes perfect .",
    "the early bird catches the worm .",
    "better late than never .",
    "where there's a will , there's a way .",
    "once upon a time , there was a little girl who lived in a village near the forest .",
    "the end .",
    "good morning , class !",
    "how are you today ?",
    "I'm fine , thank you .",
    "what time is it ?",
    "it's time to go home .",
    "please open your books to page ten .",
    "can I go to the bathroom , please ?",
    "don't forget your homework !",
    "let's go to the park .",
]

# ----------------------------------------------------------------------- templates

# Everyday sentences. "{slot}" or "{slot2}" draws a word of kind "slot"; the same
# field name in one template gets the same word. "a" becomes "an" before a vowel.
EVERYDAY_TEMPLATES = [
    "the {animal} sat on the {furniture} .",
    "the {adj} {animal} {a_intr_ed} in the {place} .",
    "the {animals} are sleeping under the {furniture} .",
    "{name} {thing_ed} the {tadj} {object} .",
    "{name} {thing_ed} a {tadj} {object} yesterday .",
    "{name} {food_ed} a {food} for {meal} .",
    "the {people} are {intr_ing} in the {place} .",
    "the {person} is {intr_ing} in the {place} .",
    "{name} gave {objpron} the {object} .",
    "{subjpron} gave {objpron} a {object} for {poss} birthday .",
    "it's {weather} today .",
    "it was {weather} on {day} .",
    "it is often {weather} in {month} .",
    "it was {weather} and {weather2} all {day_part} .",
    "I don't like {foods} , but I like {mass} .",
    "we can't {thing_base} the {object} now .",
    "there are {num} {objects} in the {place} .",
    "there is a {object} on the {furniture} .",
    "do you like {foods} ?",
    "where is the {object} ?",
    "where are my {objects} ?",
    "what did {name} {thing_base} ?",
    "what a {adj} {animal} !",
    "my {body} hurts .",
    "my {bodies} hurt .",
    "the {profession} {thing_ed} the {object} in the {day_part} .",
    "the {profession} works at the {place} .",
    "{name} wants to be a {profession} .",
    "{name} is {num} years old .",
    "{name} has a {color} {object} .",
    "the {object} is {color} .",
    "the {objects} are {color} and {color2} .",
    "{name} and {name2} {motion_ed} to the {place} together .",
    "{name} {motion_ed} home after school .",
    "we have {subject} on {day} .",
    "{name} likes {subject} more than {subject2} .",
    "the {people} {thing_base} the {objects} every day .",
    "the {person} {thing_s} the {objects} every {day_part} .",
    "I {thing_ed} my {object} last week .",
    "the {animal} is {a_intr_ing} under the {furniture} .",
    "can you {thing_base} the {object} , please ?",
    "please {thing_base} the {object} .",
    "thank you for the {object} !",
    "the {object} is too {tadj} .",
    "{name} is {padj} and {padj2} .",
    "how many {objects} do you have ?",
    "I have {num} {animals} and a {animal} .",
    "the {food} is {tadj} .",
    "{name} is reading a book about {animals} .",
    "{season} is my favorite season .",
    "{name} {intr_ed} {adv} .",
    "the students are reading in the library .",
    "the {people} {intr_ed} in the {place} on {day} .",
    "{name} was born in {month} .",
    "the {vehicle} is {tadj} .",
    "we went to the {place} by {vehicle} .",
    "{name} plays the {instrument} .",
    "{name} plays {sport} with {poss} friends .",
    "the {animals} are {a_intr_ing} in the {place} .",
    "if it rains , we will stay inside .",
    "{name} will {thing_base} the {object} tomorrow .",
    "{name} is going to {motion_base} to the {place} .",
    "I can {intr_base} very well .",
    "I can't {intr_base} today .",
    "does the {person} {thing_base} the {object} ?",
    "do the {people} {thing_base} the {objects} ?",
    "the {apadj} {person} didn't {thing_base} the {object} .",
    "who {thing_ed} my {object} ?",
    "why is the {person} so {padj} ?",
    "when does the {vehicle} leave ?",
    "{name} ate a {food} and drank some {drink} .",
    "the {object} fell off the {furniture} .",
    "the {object} is between the {object2} and the {object3} .",
    "{name} put the {object} in the {container} .",
    "{name} wakes up at {hour} o'clock .",
    "the {vehicle} leaves at {hour} o'clock .",
    "{name} is {intr_ing} with {poss} {relative} .",
    "my {relative} is a {profession} .",
    "the {person} has {num} {objects} .",
    "the {people} have a {tadj} {object} .",
    "there was a {tadj} {object} behind the {furniture} .",
    "we ate {mass} and {foods} for {meal} .",
    "I'm {padj} because it's {weather} .",
    "it's {padj} of you to {thing_base} the {object} .",
    "you're {padj} , {name} !",
    "they're {intr_ing} in the {place} .",
    "he's {padj} and she's {padj2} .",
    "that's a {tadj} {object} !",
    "what's in the {object} ?",
    "where's the {person} ?",
    "let's {intr_base} in the {place} .",
    "I'll {thing_base} the {object} later .",
    "we'll {motion_base} to the {place} on {day} .",
    "I've never seen a {tadj} {animal} .",
    "you've got a {object} in your {object2} .",
    "{name} hasn't found the {object} yet .",
    "the {objects} aren't {tadj} .",
    "the {object} isn't {tadj} .",
    "the {people} weren't {padj} .",
    "{name} wasn't {padj} .",
    "you shouldn't {thing_base} the {object} .",
    "I couldn't find my {object} .",
    "{name} wouldn't {food_base} the {food} .",
    "{name} doesn't like {mass} .",
    "the {animal} won't {a_intr_base} .",
    "the {weather_noun} was {tadj} last {day_part} .",
    "the {animal} has a {tadj} {body} .",
    "the {animals} have {tadj} {bodies} .",
    "I washed my {bodies} before {meal} .",
    "the {profession} and the {profession2} are {padj} .",
    "a {animal} is bigger than a {animal2} .",
    "the {object} is on the {furniture} near the {object2} .",
    "there are {num} {people} and {num2} {animals} on the farm .",
    "{name} counted {num} {objects} and {num2} {objects2} .",
    "{name} is {adv} {intr_ing} .",
    "on {day} {name} {intr_ed} in the {place} .",
    "last {season} we {motion_ed} to the {place} .",
    "in {month} the weather is {weather} .",
    "the {person} {intr_s} {adv} .",
    "the {people} {intr_base} {adv} .",
    "{name} always {food_s} {mass} for {meal} .",
    "the {color} {vehicle} is {tadj} .",
    "{name} {person_ed} the {person} at the {place} .",
    "the {person} {person_s} the {people} every {day} .",
    "{name} {person_ed} {name2} last {day_part} .",
    "I saw {num} {animals} at the zoo .",
    "we need {num} {objects} for the {place} .",
    "the {body} is part of the body .",
    "{name} is a {apadj} {profession} .",
    "is it {weather} outside ?",
    "are you {padj} , {name} ?",
    "was the {object} {tadj} ?",
    "were the {people} {padj} ?",
    "hello , {name} ! how are you ?",
    "goodbye , {name} , see you on {day} !",
    "sorry , I forgot your {object} .",
    "yes , the {object} is {tadj} .",
    "no , the {objects} are not {tadj} .",
    "oh , what a {tadj} {object} !",
    "the {person} {thing_ed} the {object} and then {thing_ed2} the {object2} .",
    "first {name} {intr_ed} , then {name} {intr_ed2} .",
    "{name} {intr_ed} for an hour .",
    "the {animal} {a_intr_ed} across the {place} .",
    "the {people} are waiting for the {vehicle} .",
    "my {object} is older than your {object} .",
    "this {object} is mine and that {object} is yours .",
    "these {objects} are ours and those {objects} are theirs .",
    "the {weather_noun} came in the {day_part} .",
    "{name} can {intr_base} but {name2} can't .",
    "the {food} and the {food2} are on the {furniture} .",
    "put the {mass} in the {container} , please .",
    "there's a {animal} in the {place} !",
    "nobody saw the {animal} .",
    "everybody likes {foods} .",
    "something is wrong with the {object} .",
    "{name} stayed at home with a {apadj} {animal} .",
    "the {person} spoke {adv} to the {people} .",
]

EXTRA_WORDS = _words("nobody everybody something anything nothing everyone someone therefore")

# Pronoun frames: (prefix template, continuation kind, who may be the subject).
PRONOUN_FRAMES = [
    ("{subj} lost {poss} {object} because", "reason", "person"),
    ("{subj} said that", "clause", "person"),
    ("{subj} {be} {padj} because", "reason", "person"),
    ("when {subj} got home ,", "clause", "person"),
    ("{subj} {thing_ed} the {object} and then", "clause", "person"),
    ("{subj} didn't come to the {place} because", "reason", "person"),
    ("{subj} called {poss} {relative} because", "reason", "person"),
    ("after {subj} {intr_ed} in the {place} ,", "clause", "person"),
    ("{subj} told the {profession} that", "clause", "person"),
    ("{subj} {thing_ed} {poss} {object} because", "reason", "person"),
    ("{subj} forgot {poss} {object} , so", "clause", "person"),
    ("{subj} didn't cross the street because", "reason", "any"),
    ("{subj} didn't eat {poss} food because", "reason", "any"),
    ("{subj} ran away because", "reason", "any"),
    ("{subj} slept all day because", "reason", "any"),
]
REASONS = [
    "{be} late",
    "{be} too {padj}",
    "{be} {padj}",
    "{be} in a hurry",
    "{be} not {padj}",
    "didn't see the {object}",
    "forgot the {object}",
    "had no time",
    "felt {padj}",
    "wanted to {intr_base}",
]
CLAUSES = [
    "{be} {padj}",
    "{thing_ed} the {object}",
    "{intr_ed} in the {place}",
    "wanted to {thing_base} the {object}",
    "had a {adj} day",
    "would {motion_base} to the {place} on {day}",
    "bought some {mass}",
    "drank some {drink}",
    "didn't like the {object}",
    "{person_ed} the {person}",
]

# Openings of the indirect-object lines; {A} and {B} are the two names.
IOI_INTROS = [
    "when {A} and {B} went to the {place} ,",
    "then {A} and {B} had a long walk at the {place} ,",
    "after {A} and {B} arrived at the {place} ,",
    "while {A} and {B} were working at the {place} ,",
    "when {A} and {B} got home from the {place} ,",
    "yesterday {A} and {B} met at the {place} ,",
    "{A} and {B} went to the {place} .",
    "on {day} {A} and {B} visited the {place} , and",
    "{A} and {B} were {intr_ing} in the {place} , and",
    "after {meal} , {A} and {B} sat in the {place} .",
]

# Agreement: prepositions of the distracting phrase and relative pronouns.
PP_PREPS = _words("near behind beside with from by under of for above to") + [
    "next to",
    "in front of",
    "close to",
    "far from",
]
LOC_PREPS = ["on", "under", "near", "behind", "beside", "next to", "in front of"]
ANIMATE_REL = {"person": ["who", "that"], "animal": ["that", "which"]}


# ----------------------------------------------------------------------- samplers

Rng = random.Random
Sampler = Callable[[Rng], str]


def _choice(seq: list[str]) -> Sampler:
    seq = list(seq)
    return lambda rng: rng.choice(seq)


def _form(bases: list[str], index: int) -> Sampler:
    return _choice([VERBS[b][index] for b in bases])


# Nouns by kind and number; "sheep"-like nouns are left out, their number is unclear.
_NOUNS = {
    "person": PEOPLE,
    "animal": ANIMALS,
    "thing": OBJECTS + FURNITURE + FOODS + VEHICLE_PAIRS,
    "place": PLACES,
}
_SG = {kind: [s for s, p in pairs if s != p] for kind, pairs in _NOUNS.items()}
_PL = {kind: [p for s, p in pairs if s != p] for kind, pairs in _NOUNS.items()}

_SAMPLERS: dict[str, Sampler] = {
    "name": _choice(NAMES),
    "person": _choice(_SG["person"]),
    "people": _choice(_PL["person"]),
    "profession": _choice([p[0] for p in PROFESSIONS]),
    "relative": _choice(RELATIVES),
    "animal": _choice(_SG["animal"]),
    "animals": _choice(_PL["animal"]),
    "object": _choice([o[0] for o in OBJECTS]),
    "objects": _choice([o[1] for o in OBJECTS]),
    "furniture": _choice([f[0] for f in FURNITURE]),
    "vehicle": _choice(VEHICLES),
    "place": _choice(_SG["place"]),
    "food": _choice([f[0] for f in FOODS]),
    "foods": _choice([f[1] for f in FOODS]),
    "mass": _choice(MASS_FOODS),
    "drink": _choice(DRINKS),
    "meal": _choice(MEALS),
    "body": _choice([b[0] for b in BODY]),
    "bodies": _choice([b[1] for b in BODY]),
    "color": _choice(COLORS),
    "weather": _choice(WEATHER),
    "weather_noun": _choice(WEATHER_NOUNS),
    "day": _choice(DAYS),
    "month": _choice(MONTHS),
    "day_part": _choice(DAY_PARTS),
    "season": _choice(SEASONS),
    "num": _choice(NUMBERS),
    "hour": _choice(HOURS),
    "subject": _choice(SUBJECTS),
    "sport": _choice(SPORTS),
    "instrument": _choice(INSTRUMENTS),
    "adj": _choice(ADJECTIVES),
    "padj": _choice(PERSON_ADJS),
    "apadj": _choice(ATTRIBUTIVE_PERSON_ADJS),
    "container": _choice(CONTAINERS),
    "tadj": _choice(THING_ADJS),
    "adv": _choice(ADVERBS),
    "objpron": _choice(OBJ_PRONOUNS),
    "subjpron": _choice(SUBJ_PRONOUNS),
    "poss": _choice(_words("my your our their")),
    "intr_base": _form(INTRANSITIVE, 0),
    "intr_s": _form(INTRANSITIVE, 1),
    "intr_ed": _form(INTRANSITIVE, 2),
    "intr_ing": _form(INTRANSITIVE, 3),
    "a_intr_base": _form(ANIMAL_INTRANSITIVE, 0),
    "a_intr_ed": _form(ANIMAL_INTRANSITIVE, 2),
    "a_intr_ing": _form(ANIMAL_INTRANSITIVE, 3),
    "motion_base": _form(MOTION, 0),
    "motion_ed": _form(MOTION, 2),
    "thing_base": _form(THING_VERBS, 0),
    "thing_s": _form(THING_VERBS, 1),
    "thing_ed": _form(THING_VERBS, 2),
    "food_base": _form(FOOD_VERBS, 0),
    "food_s": _form(FOOD_VERBS, 1),
    "food_ed": _form(FOOD_VERBS, 2),
    "person_s": _form(PERSON_VERBS, 1),
    "person_ed": _form(PERSON_VERBS, 2),
}

_FIELD_DIGITS = "0123456789"
_AN_RE = re.compile(r"\b([Aa]) (?=[aeiouAEIOU]|honest|hour)")


def _compile(template: str) -> tuple[str, list[tuple[str, Sampler]]]:
    """Return the template with the (field, sampler) pairs it needs."""
    fields = []
    for _, field, _, _ in string.Formatter().parse(template):
        if field and field not in dict(fields):
            key = field.rstrip(_FIELD_DIGITS)
            if key in _SAMPLERS:
                fields.append((field, _SAMPLERS[key]))
    return template, fields


def _fill(compiled: tuple[str, list[tuple[str, Sampler]]], rng: Rng, **given: str) -> str:
    """Fill a compiled template; ``given`` fixes some fields."""
    template, fields = compiled
    values = dict(given)
    for field, sampler in fields:
        if field not in values:
            values[field] = sampler(rng)
    return _AN_RE.sub(r"\1n ", template.format_map(values))


_EVERYDAY = [_compile(t) for t in EVERYDAY_TEMPLATES]
_PRONOUN_FRAMES = [(_compile(t), kind, who) for t, kind, who in PRONOUN_FRAMES]
_REASONS = [_compile(t) for t in REASONS]
_CLAUSES = [_compile(t) for t in CLAUSES]
_IOI_INTROS = [_compile(t) for t in IOI_INTROS]
_GIVE_PAST = [VERBS[v][2] for v in GIVE_VERBS]
_GIVEABLE = list(GIVEABLE)


# ------------------------------------------------------------------ line builders


def _everyday(rng: Rng) -> str:
    if rng.random() < 0.03:
        return rng.choice(FIXED_SENTENCES)
    return _fill(rng.choice(_EVERYDAY), rng)


def _noun(rng: Rng, kind: str, plural: bool) -> str:
    return rng.choice(_PL[kind] if plural else _SG[kind])


def _np(rng: Rng, kind: str, plural: bool, adj_p: float = 0.3) -> str:
    """A definite noun phrase "the [adjective] noun"."""
    noun = _noun(rng, kind, plural)
    if rng.random() < adj_p:
        pool = THING_ADJS if kind in ("thing", "place") else ATTRIBUTIVE_PERSON_ADJS
        return f"the {rng.choice(pool)} {noun}"
    return f"the {noun}"


def _present(base: str, plural: bool) -> str:
    return VERBS[base][0 if plural else 1]


def _agreement_modifier(rng: Rng, head: str, plural: bool, other: bool) -> str:
    """The distracting phrase after the subject; ``other`` is the distractor's number."""
    roll = rng.random()
    if head != "thing" and roll < 0.25:  # subject relative: "who helps the teachers"
        rel = rng.choice(ANIMATE_REL[head])
        verb = _present(rng.choice(ANIMATE_RC_VERBS), plural)
        return f"{rel} {verb} {_np(rng, rng.choice(('person', 'animal')), other)}"
    if roll < 0.5:  # object relative: "that the children like"
        rel = rng.choice(ANIMATE_REL.get(head, ["that", "which"]))
        inner = "person" if head == "thing" else rng.choice(("person", "animal"))
        verbs = THING_RC_VERBS if head == "thing" else ANIMATE_RC_VERBS
        return f"{rel} {_np(rng, inner, other)} {_present(rng.choice(verbs), other)}"
    kind = rng.choice(("thing", "thing", "place", "person", "animal"))
    phrase = f"{rng.choice(PP_PREPS)} {_np(rng, kind, other)}"
    if rng.random() < 0.15:
        phrase += f" in {_np(rng, 'place', other, 0.0)}"
    return phrase


def _agreement_verb(rng: Rng, head: str) -> tuple[str, str, str]:
    """(singular verb, plural verb, complement) for a subject of kind ``head``."""
    roll = rng.random()
    if roll < 0.3 or (head == "thing" and roll < 0.6):
        singular, plural = rng.choice((("is", "are"), ("was", "were")))
        if rng.random() < 0.5:
            return singular, plural, rng.choice(THING_ADJS if head == "thing" else PERSON_ADJS)
        where = _np(rng, rng.choice(("thing", "place")), rng.random() < 0.3, 0.2)
        return singular, plural, f"{rng.choice(LOC_PREPS)} {where}"
    if head == "thing":
        singular, plural = rng.choice((("looks", "look"), ("seems", "seem")))
        return singular, plural, f"{rng.choice(('very', 'too', 'quite'))} {rng.choice(THING_ADJS)}"
    if roll < 0.45:
        obj = rng.choice(_SG["thing"])
        article = "an" if obj[0] in "aeiou" else "a"
        return "has", "have", f"{article} {obj}"
    if roll < 0.75:
        base = rng.choice(ANIMAL_INTRANSITIVE if head == "animal" else INTRANSITIVE)
        tail = rng.choice(
            (f"in {_np(rng, 'place', False, 0.0)}", rng.choice(ADVERBS), "every day", "at night")
        )
        return VERBS[base][1], base, tail
    base = rng.choice(PERSON_VERBS if head == "person" else ANIMATE_RC_VERBS)
    return VERBS[base][1], base, _np(rng, rng.choice(("person", "animal")), rng.random() < 0.5)


def _agreement(rng: Rng, opposite_p: float = 0.75) -> tuple[str, str, str, str]:
    """(prefix, correct verb, wrong verb, rest of the sentence)."""
    head = rng.choice(("person", "person", "animal", "thing"))
    plural = rng.random() < 0.5
    other = (not plural) if rng.random() < opposite_p else plural
    subject = _np(rng, head, plural, 0.25)
    prefix = f"{subject} {_agreement_modifier(rng, head, plural, other)}"
    singular, plural_verb, rest = _agreement_verb(rng, head)
    correct, wrong = (plural_verb, singular) if plural else (singular, plural_verb)
    return prefix, correct, wrong, f"{rest} ."


_PRONOUNS = {"he": "his", "she": "her", "they": "their", "it": "its"}


def _pronoun_subject(rng: Rng, people_only: bool) -> tuple[str, str]:
    """(subject words, pronoun) for a pronoun line."""
    roll = rng.random() * (0.7 if people_only else 1.0)
    if roll < 0.55:
        if rng.random() < 0.5:
            return rng.choice(MALE_NAMES), "he"
        return rng.choice(FEMALE_NAMES), "she"
    if roll < 0.7:
        if rng.random() < 0.5:
            return f"the {rng.choice(MALE_PEOPLE)[0]}", "he"
        return f"the {rng.choice(FEMALE_PEOPLE)[0]}", "she"
    if roll < 0.8:
        first, second = rng.sample(NAMES, 2)
        return f"{first} and {second}", "they"
    if roll < 0.9:
        return f"the {rng.choice(_PL['person'])}", "they"
    return f"the {rng.choice(_SG['animal'])}", "it"


def _pronoun(rng: Rng, people_only: bool = False) -> tuple[str, str, str, str]:
    """(prefix, correct pronoun, wrong pronoun, rest of the line)."""
    subject, pronoun = _pronoun_subject(rng, people_only)
    frames = [f for f in _PRONOUN_FRAMES if pronoun != "it" or f[2] == "any"]
    frame, kind, _ = rng.choice(frames)
    be = "were" if pronoun == "they" else "was"
    prefix = _fill(frame, rng, subj=subject, poss=_PRONOUNS[pronoun], be=be)
    rest = _fill(rng.choice(_REASONS if kind == "reason" else _CLAUSES), rng, be=be)
    wrong = {"he": "she", "she": "he", "they": "he", "it": "he"}[pronoun]
    if pronoun == "they" and subject.startswith("the "):
        wrong = "it"
    return prefix, pronoun, wrong, f"{rest} ."


def _ioi(rng: Rng) -> tuple[str, str, str, str]:
    """(prefix, correct name, wrong name, rest): the repeated name is the giver."""
    first, second = rng.sample(NAMES, 2)
    intro = _fill(rng.choice(_IOI_INTROS), rng, A=first, B=second)
    giver, receiver = (first, second) if rng.random() < 0.5 else (second, first)
    thing = rng.choice(_GIVEABLE)
    article = "an" if thing[0] in "aeiou" else "a"
    prefix = f"{intro} {giver} {rng.choice(_GIVE_PAST)} {article} {thing} to"
    return prefix, receiver, giver, "."


def _induction(rng: Rng) -> str:
    roll = rng.random()
    if roll < 0.6:
        phrase = " ".join(rng.choices(_phrase_words(), k=rng.randint(4, 16)))
        if roll < 0.35:
            return f"{phrase} . {phrase} ."
        if roll < 0.5:
            return f"{phrase} . {_everyday(rng)} {phrase} ."
        short = " ".join(phrase.split()[:6])
        return f"{short} , {short} , {short} ."
    sentence = _everyday(rng)[:-2]
    if roll < 0.75:
        return f"{sentence} . {sentence} again ."
    if roll < 0.85:
        return f"{sentence} . yes , {sentence} ."
    return f"{sentence} . I said {sentence} ."


def _line(rng: Rng) -> str:
    roll = rng.random()
    if roll < 0.16:
        prefix, answer, _, rest = _agreement(rng)
    elif roll < 0.28:
        prefix, answer, _, rest = _pronoun(rng)
    elif roll < 0.42:
        prefix, answer, _, rest = _ioi(rng)
    elif roll < 0.72:
        return _induction(rng)
    else:
        return _everyday(rng)
    return f"{prefix} {answer} {rest}"


# ------------------------------------------------------------------------ lexicon


@lru_cache(maxsize=1)
def _lexicon_set() -> frozenset[str]:
    words: set[str] = set(".,?!")
    lists = [
        NAMES,
        FUNCTION_WORDS,
        CONTRACTIONS,
        EXTRA_WORDS,
        ADJECTIVES,
        ADVERBS,
        VEHICLES,
        MASS_FOODS,
        COLORS,
        WEATHER,
        WEATHER_NOUNS,
        DAYS,
        MONTHS,
        DAY_PARTS,
        SEASONS,
        TIME_WORDS,
        NUMBERS,
        OTHER_NUMBERS,
        SUBJECTS,
        SPORTS,
        INSTRUMENTS,
        MEALS,
    ]
    for pairs in (PEOPLE, ANIMALS, OBJECTS, FURNITURE, VEHICLE_PAIRS, PLACES, FOODS, BODY):
        lists.append([w for pair in pairs for w in pair])
    lists.extend(list(forms) for forms in VERBS.values())
    templates = EVERYDAY_TEMPLATES + FIXED_SENTENCES + REASONS + CLAUSES + IOI_INTROS + PP_PREPS
    templates += [t for t, _, _ in PRONOUN_FRAMES] + list(ANIMATE_REL["person"])
    templates += ["that which very too quite in every day at night was were has have"]
    templates += ["again yes I said"]
    for text in templates:
        lists.append(re.sub(r"\{[^}]*\}", " ", text).split())
    for items in lists:
        words.update(w.lower() for w in items)
    return frozenset(words)


@lru_cache(maxsize=1)
def _phrase_words() -> list[str]:
    """Every word of the lexicon in its written form (names capitalised)."""
    display = {w.lower(): w for w in NAMES + DAYS + MONTHS + ["I", "English"]}
    return [display.get(w, w) for w in sorted(_lexicon_set()) if w not in ".,?!"]


def _check_n(n: object, what: str = "n") -> None:
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"{what} must be an int, got {n!r}")
    if n <= 0:
        raise ValueError(f"{what} must be positive, got {n}")


# ---------------------------------------------------------------------- public API


def lexicon() -> list[str]:
    """Return the sorted list of every word type the generator can emit.

    Words are lowercased; the punctuation tokens ". , ? !" are items of their own.
    """
    return sorted(_lexicon_set())


def generate_corpus(n_lines: int, seed: int = 0) -> list[str]:
    """Return ``n_lines`` lines of training text, a mix of all the kinds of line.

    Deterministic: the same ``(n_lines, seed)`` gives the same list, and a shorter
    corpus is a prefix of a longer one with the same seed. Roughly 20% agreement
    lines, 15% pronoun lines, 12% indirect-object lines, 18% repeated phrases and
    35% everyday sentences. Raises ValueError if ``n_lines`` is not a positive int.
    """
    _check_n(n_lines, "n_lines")
    rng = random.Random(f"corpus:{seed}")
    return [_line(rng) for _ in range(n_lines)]


def agreement_probes(n: int, seed: int = 1) -> list[tuple[str, str, str]]:
    """Return ``n`` subject-verb agreement probes ``(prefix, correct_verb, wrong_verb)``.

    The prefix ends right before the verb, e.g. ``("the keys to the old cabinet",
    "are", "is")``; the subject and the distracting noun differ in number in every
    probe, through a prepositional phrase or a relative clause. Drawn from a random
    stream separate from :func:`generate_corpus`. Raises ValueError if ``n`` is not a
    positive int.
    """
    _check_n(n)
    rng = random.Random(f"agreement-probes:{seed}")
    return [_agreement(rng, opposite_p=1.0)[:3] for _ in range(n)]


def ioi_probes(n: int, seed: int = 2) -> list[tuple[str, str, str]]:
    """Return ``n`` indirect-object probes ``(prefix, correct_name, wrong_name)``.

    E.g. ``("when Mary and John went to the store , John gave a drink to", "Mary",
    "John")``: the wrong name occurs twice in the prefix, the correct one once.
    Raises ValueError if ``n`` is not a positive int.
    """
    _check_n(n)
    rng = random.Random(f"ioi-probes:{seed}")
    return [_ioi(rng)[:3] for _ in range(n)]


def pronoun_probes(n: int, seed: int = 3) -> list[tuple[str, str, str]]:
    """Return ``n`` pronoun probes ``(prefix, correct_pronoun, wrong_pronoun)``.

    E.g. ``("Mary lost her keys because", "she", "he")``: the subject is a name or
    a gendered noun and the answer is "he" or "she". Raises ValueError if ``n`` is
    not a positive int.
    """
    _check_n(n)
    rng = random.Random(f"pronoun-probes:{seed}")
    return [_pronoun(rng, people_only=True)[:3] for _ in range(n)]
