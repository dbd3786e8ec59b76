"""Quantities of a problem: the numbers it states, read off its math syntax graph, as a careful reader reads them.

A quantity is a number written in the text or a number of a formula. Each gets its
exact value (a ``Fraction``; a percentage is divided by 100), its written form
(``integer``, ``decimal``, ``fraction``, ``percent``, ``word``, ``formula``), its unit
or object from the dependency tree (``5 inch heels`` -> unit ``inch``, object
``heels``; ``2 skeins of wool`` -> ``skeins``, ``wool``), its sentence and whether that
sentence is the question.

Read in the text:

- digits, signs, fractions and notation, as ``parsers.numbers.parse_number`` reads them:
  ``12``, ``1,000.5``, ``.5``, ``-7``, ``−4`` (Unicode minus), ``3/4``, ``1 1/2``, ``½``, ``2½``,
  ``2 ½``, ``1e5``, ``10^3``, ``2×10^3``, ``3 x 10^8``, ``50k``, ``$3M``, ``$2.174T``, ``10 000``
  (thousands spaces); money ``$2.50``, ``-$5``, ``−$40``, ``$ 5`` (unit ``$``, also ``€ £ ¥``), and
  ``($99.99)``, a negative amount as accounts write it, and a sign after the amount (``175$``, ``45 €``);
  percentages ``25%``, ``25 percent``, ``15 per cent``, ``forty per cent``; scales ``1.5 million``, ``3 hundred``,
  and a scale written once for a range (``between $1.5 and $2 billion``, ``3 to 4 million``: both ends);
  ``±3`` (3: a spread, not a sign); fullwidth and other scripts' digits (``３５０``, ``５０％``) and powers of ten
  in superscripts (``4.5 × 10⁻³``); ``~40`` (about 40), ``HK$18.50``, ``87¢``, ``5.000 €`` (points between thousands
  beside a euro sign), ``$1.2 bn``, ``¥1.2tn``, ``£9.99pm`` (per month);
- a number glued to its unit or a neighbour in one token: ``4km^2`` (4, unit ``km^2``), ``25lbs``,
  ``180ml``, ``8-`` of ``8- to 16-meter``, both ends of ``3.5–4.0``, both numbers of ``2,000.45±0.01``,
  ``2.48×10−5`` (a power of ten whose caret was lost); ``573.15K`` in a sentence about temperature
  is 573.15 kelvin, not 573,150; the exponent of ``(AC)^2`` and the ``10`` of ``base-10``; ``7½%``, ``¼-½``,
  ``4.25%-4.5%``, ``70–85 million`` (both ends), ``6'2"`` (6 ft, 2 in), ``120/80 mmHg`` and ``4.5/5`` (two
  numbers), ``180C/160C``, ``3/4ths`` (3/4), ``9.58s``, ``2x more`` (a multiplier) and ``3x = 12`` (a coefficient), the ``10`` of
  ``C(10, 3)`` and the ``42`` of ``\\boxed{42}`` written as text;
- number words: ``three``, ``twenty-five``, ``a hundred and twenty``, ``a million``, ``half``,
  ``twice``, ``tenfold``, ``a third of``, ``two thirds``, ``3 fifths of``; ``two thousand and nineteen`` (2019),
  ``hundred and twelve`` (112), ``three million, two hundred & forty`` (3,000,240), ``thousand`` alone,
  ``seventy-five thousands``, scales up to ``decillion``; ``two point three``, ``point one``;
  ``minus fifteen``; a word that cannot follow the one before it starts a new number (``one two
  three`` is three numbers);
- dozens: ``a dozen`` is 12, ``two dozen`` and ``5 dozen`` are 24 and 60 (one quantity that
  counts the eggs, not 2 or 5 with unit ``dozen``), ``half a dozen`` is 6; ``dozens of`` and
  ``how many dozen`` are not quantities;
- halves: ``two and a half hours`` and ``3 and a half`` are 5/2 and 7/2, ``one and a quarter`` 5/4,
  ``an hour and a half`` 3/2 (unit ``hour``);
- ratios: ``3:2`` is two quantities, 3 and 2, each with unit ``ratio``: a teacher divides in
  the ratio 3:2 by working with 3, 2 and 3 + 2 = 5 parts, so the solution reader must find
  both terms among the given numbers (``4:5:6`` gives three). ``a:b`` with a two-digit ``b``
  under 60 and ``a`` at most 24 is a clock time unless the sentence says ``ratio`` or
  ``proportion`` (``10:45`` in "the ratio ... is 10:45" is a ratio; ``7:30 p.m.`` is a time).

Read in formulas: every numeric literal of the operator tree, except that a *number
written in notation* is one quantity with its exact value: a fraction of numbers
(``\\frac{1}{2}``, ``\\dfrac12``, ``3/4`` -> 1/2, 1/2, 3/4), a mixed number (``2\\frac{1}{3}``
-> 7/3), a power of ten (``10^3``, ``10^{-2}``), scientific notation (``2\\times 10^3``,
``6.5 \\cdot 10^{-5}``) and a unary sign on any of these (``-4``, ``-\\frac{2}{3}``,
``(-2, 0)``). A computation keeps its literals, because they are what the problem gives:
``2+3``, ``2^{10}``, ``\\frac{x}{2}``, ``\\binom{8}{4}`` and ``25\\%`` give their numbers one by one,
and a binary minus is an operator (``12 - 3`` gives 12 and 3). The value is worked out
exactly with ``Fraction`` (SymPy is not needed for rationals and would cost a
millisecond per formula). Formula quantities have no unit or object.

Not quantities (dropped, so the solution reader and the alignment never see them): ``one``
as a pronoun (``the red one``, ``that one costs``, ``each one``, ``one at a time``), ordinals
(``2nd``, ``third place``, ``twenty-first``; but ``a third of`` is 1/3), seasons (``2013-14``),
dates and years (``in 2019``, ``between 2000 and 2005``, ``from 1990 to 1995``, ``May 4, 1901``,
``1 May 2006``, ``on 12/25``, ``3/14/1998``, ``a 2022 study``, ``the class of '98``, ``the 1990's``, ``in nineteen
ninety-five``), clock times (``3:30``, ``9 a.m.``, ``2.13 am``, ``after 8.30``), phone numbers
(``555-123-4567``, ``(800) 555-0199``, ``555-1234`` in a sentence about calling), labels and names
(``Route 66``, ``42 Oak Street``, ``track 7 was cut``, ``stop 26``, ``Voyager 2``, ``English 101``, ``iPhone 12``, ``South 32 Ltd``), model names
(``the 747-8 can``, ``the Pixel 8 were``, ``the 5G network``, ``Flight BA 283``), catalogue numbers and IDs
(``J1149.5+6663``, ``06F6``, ``#48213``, ``978-0-14-044913-6``, ``4471-B``), ranks (``its 10 millionth visitor``),
phone numbers in spaced groups (``0345 600 7890``, ``+44 20 7946 0958``), years named by
the word before them (``fiscal 2025``, ``the years 1914 to 1918``, ``Q3 2024``), ``one`` in a word of its own
(``one-way``, ``one-to-one``), ``double`` and ``triple`` as kinds of things (``an ordered triple``, ``the double
cone``), phone extensions (``extension 204``), postcodes (``LS6 2QB``), versions and numbered names (``Python 3.12``,
``Room 3.14``, ``the number 38 bus``, ``the 49ers``, ``Your seat is 42C``), idioms (``in two minds``, ``on cloud
nine``), vague scales (``several hundred``), and numbers written with more than
:data:`~mathgraph.parsers.numbers.MAX_DIGITS` digits (``parse_number`` refuses them: no
exception, no quantity).

The rules work on the tokens of the graph (the dependency parser's) and on the source
text they span, so they need no second tokenisation; ``find_quantities`` is called by
``parsers.syntax_graph.build_syntax_graph``, and ``graph.quantities()`` returns what it found.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property

from mathgraph.graph import MathSyntaxGraph, Node, Quantity
from mathgraph.parsers.formula_numbers import formula_quantities
from mathgraph.parsers.numbers import (
    DIGITS_PATTERN,
    MAX_DIGITS,
    MONTHS,
    ORDINAL_DENOMINATORS,
    ORDINAL_WORDS,
    SCALE_WORDS,
    SUPERSCRIPTS,
    TENS_WORDS,
    UNIT_WORDS,
    VULGAR_FRACTIONS,
    parse_number,
)

__all__ = ["find_quantities", "problem_sentences", "ProblemSentence", "parse_number", "MAX_DIGITS"]

_VULGAR = "".join(VULGAR_FRACTIONS)  # "½⅓⅔¼¾...", for character classes
# What may come before a number's digits, none of it part of its value: a tilde says about ("~40"); a "±" is an
# uncertainty or a spread and a plus sign no sign of the value ("±3 points" is 3, "+9.8%" is 9.8%); a country's
# letters before a dollar sign ("HK$18.50")
_ABOUT_OR_SPREAD = r"[~≈]?[±+]?"
_COUNTRY_BEFORE_DOLLAR = r"(?:[A-Za-z]{1,2}(?=\$))?"
# A token that may open a number: those, a sign, a currency sign, then a digit or a vulgar fraction ("-$5", "−4",
# "½"). Digits of any script count ("３５０", fullwidth, reads as 350).
_STARTS_LIKE_NUMBER_RE = re.compile(rf"{_ABOUT_OR_SPREAD}[-−]?{_COUNTRY_BEFORE_DOLLAR}[$€£¥]?[-−]?\.?[\d{_VULGAR}]")
_PREFIX_RE = re.compile(rf"{_ABOUT_OR_SPREAD}([-−]?){_COUNTRY_BEFORE_DOLLAR}([$€£¥]?)([-−]?)")
_RATIO_PART = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_RATIO_RE = re.compile(rf"{_RATIO_PART}(?::{_RATIO_PART})+")  # "3:2", "1:50,000"
_PHONE_RE = re.compile(r"(?:1-)?(?:\d{3}-){1,2}\d{4}")
_AREA_CODE_RE = re.compile(r"\d{3}")
_POWER_OF_TEN_RE = re.compile(rf"10\^\{{?[-−]?\d+\}}?|10[{SUPERSCRIPTS}]+")  # "10^3", "10^{{-2}}", "10⁻³"
_MONTH_DAY_RE = re.compile(r"(\d{1,2})/(\d{1,2})")
_CURRENCY = {"$", "€", "£", "¥"}
_MINUS = {"-", "−"}
_PERCENT = {"%", "％", "percent", "percents"}
_MULTIPLY = {"x", "×", "*", "·"}
_CLOCK_WORDS = {"a.m.", "p.m.", "a.m", "p.m", "am", "pm", "o'clock", "o’clock"}
_RATIO_CUES = {"ratio", "ratios", "proportion"}
_PHONE_CUES = {"call", "phone", "dial", "telephone", "cell", "fax", "hotline", "helpline", "mobile", "tel", "tel."}
_STREET_WORDS = {"street", "st", "avenue", "ave", "road", "rd", "lane", "boulevard", "blvd", "drive", "way", "court"}
_STREET_WORDS |= {"grove", "crescent", "terrace", "close", "place", "pl", "square", "sq", "gardens", "mews", "parade"}
_STREET_WORDS |= {"row", "hill", "walk", "wharf", "quay", "rise"}
_RACES = {"race", "races", "run", "runs", "walk", "marathon", "fun"}
_DATE_CUES = {"on", "until", "till", "since", "dated"}
_RANGE_WORDS = {"and", "to", "or", "through", "until", "till", "-", "–"}
_YEAR_CUES = {"in", "since", "until", "till", "by", "from", "year", "during", "before", "after", "of", "between"}
# words that name a year after them: "fiscal 2025", "FY 2024", "the years 1914 to 1918", "early 2024", "summer 2019"
_YEAR_CUES |= {"years", "fiscal", "fy", "early", "late", "mid", "circa", "ca.", "c.", "spring", "summer", "autumn"}
_YEAR_CUES |= {"fall", "winter"}
# words before a model name: "the 747-8", "Samsung's Galaxy 9"
_NAME_DETERMINERS = {"the", "this", "that", "these", "those", "its", "their", "our", "his", "her", "my", "your", "'s"}
_QUARTER_RE = re.compile(r"[qh][1-4]")  # "Q3 2024", "H1 2025": a quarter or a half of a year
# singular nouns a number before them names rather than counts: "the 73 bus", "the 2 train"
_ROUTE_NOUNS = {"bus", "tram", "streetcar", "trolleybus", "train"}
_CODE_GROUP_RE = re.compile(r"[A-Z0-9]+")  # one group of a code written in spaced groups: "1Z 999 AA1 01 2345"
# "15,50 €", "39,2 °C", "€1.299,50": a decimal comma (one or two decimals, never three), points between thousands
_DECIMAL_COMMA_RE = re.compile(r"(\d{1,3}(?:\.\d{3})*),(\d{1,2})")
_POINT_THOUSANDS_RE = re.compile(r"\d{1,3}(?:\.\d{3})+")  # "5.000 €", "€1.250.000": points between thousands
# nouns a number after names one of them (``gate 12``, ``Year 9 pupils``): never counted by it; "page" and "day"
# are left out, since word problems compute with them ("she is on page 80 of 300")
_LABEL_NOUNS = {"room", "gate", "platform", "terminal", "exit", "channel", "flight", "seat", "locker", "suite"}
_LABEL_NOUNS |= {"apartment", "apt", "highway", "interstate", "figure", "fig", "table", "section", "exercise"}
_LABEL_NOUNS |= {"episode", "chapter", "year", "grade", "class", "level", "stage", "season", "lane", "aisle"}
_LABEL_NOUNS |= {"junction", "option", "flat", "unit", "block", "bay", "clause"}
# nouns a number after names one of them only when no noun follows it: "track 7 was cut", "stop 26 every 20 minutes",
# "take bus 14", but "at the first stop 8 people got off", "run the track 12 times" count
_LOOSE_LABEL_NOUNS = {"track", "stop", "route", "zone", "pier", "berth", "ward", "hall", "court", "bus"}
_LOOSE_LABEL_NOUNS |= {"tram", "bug", "ticket", "issue", "invoice", "stand", "stall", "booth", "dock", "pitch"}
_LOOSE_LABEL_NOUNS |= {"counter", "window", "row", "bed", "cabin", "desk", "carousel", "jetty", "lot"}
# loose labels that are never verbs: opening a sentence they name too ("Bus 38 leaves from stand F", where the tagger
# reads "leaves" as a noun; not "Stop 2 raised beds", a command)
_NOUN_ONLY_LABELS = {"bus", "tram", "pier", "berth", "ward", "hall", "booth", "cabin", "desk", "carousel", "jetty"}
_NOUN_ONLY_LABELS |= {"lot"}
_ANY_LABEL_NOUNS = _LABEL_NOUNS | _LOOSE_LABEL_NOUNS
_POSSESSIVES = {"my", "your", "his", "her", "its", "our", "their"}
# abbreviations a number after names a work or a part of one: "Nocturne No. 2", "Op. 9", "Vol. 3", "Fig. 4"
_LABEL_ABBREVIATIONS = {"No", "Nos", "Op", "Vol", "Ch", "Fig", "Art", "Sec"}
_LABEL_ABBREVIATION_RE = re.compile(r"\b(?:" + "|".join(sorted(_LABEL_ABBREVIATIONS)) + r")\.\s*$")
# nouns whose value is a string of digits, not a count: "the code is 5507-2219", "PIN: 4471", "access code 0451"
_IDENTIFIER_NOUNS = {"code", "pin", "password", "passcode", "passcodes", "id", "isbn", "sku", "vin", "postcode"}
_IDENTIFIER_NOUNS |= {"zipcode", "username"}
# nouns that name an identifier only with "number" after them: "your order number is 8812", not "the order is 12"
_NUMBERED_NOUNS = {"order", "account", "reference", "confirmation", "tracking", "booking", "registration", "policy"}
_NUMBERED_NOUNS |= {"membership", "licence", "license", "serial", "ticket", "invoice", "customer", "member", "case"}
_NUMBERED_NOUNS |= {"model", "part", "product", "item", "batch", "lot", "student", "employee", "patient", "claim"}
_NUMBERED_NOUNS |= {"passport", "card", "phone", "telephone", "mobile", "contract", "permit", "visa", "vehicle"}
_NUMBERED_NOUNS |= {"cheque", "check"}  # "Cheque no. 118305"
# currency codes written before or after an amount: "CHF 480", "480 CHF", "USD 12.50"
_CURRENCY_CODES = {"USD", "EUR", "GBP", "CHF", "JPY", "CAD", "AUD", "NZD", "INR", "CNY", "HKD", "SGD", "SEK", "NOK"}
_CURRENCY_CODES |= {"DKK", "ZAR", "MXN", "BRL", "KRW", "RUB", "TRY", "PLN", "CZK", "HUF", "ILS", "AED", "SAR"}
_STATUS_NOUNS = {"error", "status"}  # "a 503 error": the number names the error
# words of a sentence about coins, where "a quarter" is one: "change for a quarter using U.S. coins"
_COIN_WORDS = {"coin", "coins", "cent", "cents", "change", "dime", "dimes", "nickel", "nickels", "penny", "pennies"}
_CLOCK_PARTS = {"half", "quarter"}  # "half past seven", "a quarter to five": a time of day, not a count
# words of money an amount in words ends in, as a cheque writes it: "Eight Hundred and Forty Pounds", "Fifty Cents"
_MONEY_WORDS = {"dollars", "dollar", "pounds", "pound", "euros", "euro", "cents", "cent", "pence", "rupees", "yen"}
_LONGEST_WRITTEN_AMOUNT = 16  # tokens: "Two Thousand Three Hundred and Sixty - Six" is 8
# what an hour and its minutes in words may name: "the nine forty-two service", "the two fifteen train"
_DEPARTURES = {"service", "train", "bus", "flight", "ferry", "coach", "sailing", "departure", "express", "shuttle"}
_DEPARTURES |= {"connection"}
# verbs of a timetable an hour written with a point may follow: "flight lands 6.40 at gate 23"
_TIMETABLE_VERBS = {"lands", "landed", "departs", "departed", "arrives", "arrived", "leaves", "arriving", "departing"}
# times of day that "one" may open as "some": "and one night we dug forty-two cars out", "One day, a farmer"
_SOME_TIMES = {"day", "night", "morning", "evening", "afternoon", "summer", "winter", "spring", "autumn"}
# words before an hour of the clock: "before eight in the morning", "at 9 at night"
_TIME_PREPOSITIONS = {"at", "before", "after", "until", "till", "by", "from", "since", "around", "about", "between"}
_PARTS_OF_THE_DAY = {"morning", "afternoon", "evening", "night"}
_TILL = ("till", "until", "til")
# words between "at" and an hour in speech and messages: "the lorry comes at like 7", "at about six."
_HEDGES = {"like", "about", "around", "roughly", "approx", "approximately"}
# words that make "at 2." a price or an age rather than an hour: "sold them at 2.", "she could read at 5."
_NOT_AN_HOUR_AT = {"$", "£", "€", "sold", "sell", "sells", "selling", "price", "priced", "prices", "cost", "costs"}
_NOT_AN_HOUR_AT |= {"paid", "pay", "buy", "bought", "worth", "charge", "charges", "each", "per", "age", "aged", "old"}
_NOT_AN_HOUR_AT |= {"birthday", "born", "score", "scored", "odds", "tied", "level", "sequence", "counter", "term"}
_NOT_AN_HOUR_AT |= {"terms", *_MONEY_WORDS}
# words before the first hour of a span of the clock: "from 11 till 5", "on 7 till 3", "slot is 8 till 12"
_CLOCK_SPAN_OPENERS = {"from", "on", ",", "is", "'s", "’s"}
# words that open a place after an hour: "drinks at 8 at the usual place", "at 7 at ours"
_PLACE_DETERMINERS = {"the", "my", "your", "ur", "our", "his", "her", "their", "ours", "yours", "mine"}
# verbs of a count's first or last value: "The counter starts at 5.", "the list ends at 9." (an hour needs "at like")
_BOUND_VERBS = {"start", "starts", "started", "starting", "begin", "begins", "began", "end", "ends", "ended", "stop"}
_BOUND_VERBS |= {"stops", "stopped"}
# words of a sentence about an oven, where "two-twenty" is a temperature, not a time
_OVEN_WORDS = {"bake", "baked", "bakes", "baking", "oven", "ovens", "roast", "roasted", "roasting", "degrees", "fan"}
_OVEN_WORDS |= {"sear", "seared", "searing"}
# verbs of a shop or a door an hour "at" follows: "they shut at 6", "the pool opens at 7" (not "starts at 5": a count
# may start at a number)
_OPENING_VERBS = {"open", "opens", "opened", "close", "closes", "closed", "shut", "shuts"}
# verbs of a clock that strikes an hour: "the clock struck eleven"
_STRIKE_VERBS = {"struck", "strikes", "strike", "striking", "chimed", "chimes", "chime", "chiming"}
_HEX_RE = re.compile(r"0[xX][0-9A-Fa-f]+")  # "0x80070005": an error code or an address, no count
# video resolutions, the numbers a glued "p" follows that are no pence ("1080p")
_RESOLUTIONS = {144, 240, 360, 480, 576, 720, 1080, 1440, 2160, 4320}
_ARITHMETIC_SIGNS = {"+", "-", "−", "=", "*", "×", "/", "÷"}
# tokens after which a capitalised number word may still open its sentence: 'He said, "Two'; "Answer: Three"
_OPENERS = {'"', "“", "'", "‘", "(", ":"}
# races named by their distance: "the 400m hurdles" is 400 metres, not 400 million hurdles
_RACE_EVENTS = {"hurdles", "relay", "relays", "freestyle", "breaststroke", "backstroke", "medley", "steeplechase"}
_RACE_EVENTS |= {"sprint", "sprints", "heats", "finals", "races"}
_SUPERLATIVE_WORDS = {"first", "last", "best", "worst", "most", "least", "highest", "lowest", "biggest", "largest"}
_ADJECTIVES_IN_EST = {"honest", "dishonest", "modest", "immodest", "earnest"}  # no superlatives
_HUNDRED_AND_SCALES = {"hundred", *SCALE_WORDS}
# plural scales inside a run of number words ("seventy-five thousands"); a run never starts with one ("thousands of")
_PLURAL_SCALES = {f"{word}s": value for word, value in {"hundred": 100, **SCALE_WORDS}.items()}
# words that make a bare scale word vague ("several hundred years", "a few thousand") or a name ("the Thousand")
_VAGUE_BEFORE = {"several", "few", "many", "some", "the", "of", "hundreds", "thousands", "millions"}
# "one" after these is a pronoun ("that one costs", "each one", "the preceding one")
_PRONOUN_ONE_BEFORE = {"that", "this", "the", "which", "each", "every", "another", "no", "any", "other", "same"}
_PRONOUN_ONE_BEFORE |= {"next", "last"}  # "next one's in 45 mins"
# "more than one with a garden" is a number, "more acidic than one with a pH of 4" a pronoun
_AMOUNT_COMPARATIVES = {"more", "less", "fewer", "greater", "larger", "smaller", "bigger", "higher", "lower"}
# idioms whose number words count nothing (each word as the reader lowercases it)
_IDIOMS = (
    ("in", "two", "minds"),
    ("one", "of", "a", "kind"),
    ("cloud", "nine"),
    ("two", "and", "two", "together"),
    ("two", "birds", "with", "one", "stone"),
    ("square", "one"),
    ("two", "left", "feet"),
    ("sixes", "and", "sevens"),
    ("on", "all", "fours"),
    ("to", "the", "nines"),
    # "which is one reason it is used", "That's one reason", "one reason why": one of several, counted by no one
    ("is", "one", "reason"),
    ("was", "one", "reason"),
    ("'s", "one", "reason"),
    ("one", "reason", "why"),
    ("one", "by", "one"),  # "walked in one by one": in turn, no count
    ("one", "after", "another"),
    ("one", "after", "the", "other"),
    ("absolute", "zero"),  # a named temperature, no amount
    ("one", "another"),  # "they hear one another": each other
)
# idioms that an article before them makes a size: "a one by one square" (not "walked in one by one")
_IDIOMS_NOT_AFTER_AN_ARTICLE = {("one", "by", "one")}
_SIGN_WORDS = {"minus", "negative"}
_DIGIT_WORDS = {"o": 0, **{w: v for w, v in UNIT_WORDS.items() if v < 10}}
_TEMPERATURE_CUES = {
    "°",
    "°c",
    "°f",
    "c",
    "f",
    "celsius",
    "fahrenheit",
    "kelvin",
    "temperature",
    "temperatures",
    "degrees",
}
_JOINERS = {"and", "&"}
# a number glued to what follows it in one token: a unit ("4km^2", "180ml", "25lbs"), a hyphen of "8- to 16-meter",
# a range ("3.5–4.0", "4.25%-4.5", "2½-3"), an uncertainty ("2,000.45±0.01"), a power of ten with its caret lost
# ("2.48×10−5"), a percent sign the tokenizer left on its number ("５０％" in fullwidth, "7½%"), a currency sign after
# the amount ("175$.")
_UNIT_AND_FULL_STOP_RE = re.compile(r"\d+(?:[.,]\d+)*[A-Za-zµ°¢]+\.")  # "180C." at a sentence's end
_GLUED_RE = re.compile(
    rf"(?P<number>{DIGITS_PATTERN}|\d*[{_VULGAR}])(?:"
    rf"(?P<unit>[a-zA-Zµ°¢]+(?:\^?[23])?)"
    rf"|(?P<hyphen>-)"
    rf"|(?P<percent>[%％])"
    rf"|(?P<money>[$€£¥])[.,;:!?]?"
    rf"|(?P<percent_before>[%％])?(?P<dash>[-–—±])(?P<money_second>[$€£¥])?(?P<second>{DIGITS_PATTERN}|\d*[{_VULGAR}])"
    rf"|[×x](?P<ten>10)(?:[-−](?P<exp>\d{{1,2}}))?"
    rf")"
)
_NOT_UNITS = {"st", "nd", "rd", "th", "s", "x", "X", "am", "pm", "a", "p", "ers", "ERS"}  # "the 49ers": a name
# a sentence never ends or starts with a multiplication sign: a split there is the tagger's ("−1.602 | × 10⁻¹⁹")
_OPEN_OPERATORS = {"×", "·", "*"}
# the number after these words is a phone extension: "extension 204", "ext. 31"
_EXTENSION_WORDS = {"extension", "ext", "ext.", "extn"}
# a postcode's inward part after its outward part: "LS6 2QB", "SW1A 1AA" (British), "K1A 0B1" (Canadian)
_POSTCODE_OUT_RE = re.compile(r"[A-Z]{1,2}\d[A-Z\d]?|[A-Z]\d[A-Z]")
_POSTCODE_IN_RE = re.compile(r"\d[A-Z]{2}|\d[A-Z]\d")
# a vulgar fraction glued to a hyphenated unit in one token: "¾-inch", "1½-cup"
_VULGAR_HYPHEN_RE = re.compile(rf"(\d*[{_VULGAR}])-([a-zA-Z]+)")
_SEASON_RE = re.compile(r"(?:1[89]|20)\d\d")
_CAMEL_RE = re.compile(r"[a-z]+[A-Z]\w*")  # "iPhone 12": a product name
_EXPONENT_RE = re.compile(r".*[A-Za-z)]\^(\d{1,3})")  # "(AC)^2" written as text
# a number opening a function's arguments or a box, or after a word and a slash, kept in one token by the
# tokenizer: "f(2", "C(10", "\boxed{42", "down/20" (of "300 Mbps down/20 Mbps up")
_ARGUMENT_RE = re.compile(
    rf"(?:[A-Za-z]{{1,3}}\(|\\boxed\{{|[A-Za-z°]{{1,6}}/)(?P<sign>[-−]?)(?P<number>{DIGITS_PATTERN})"
)
_TEXT_FRACTION_RE = re.compile(r"\\[dt]?frac\{(\d+)\}\{(\d+)")  # "\frac{1}{4" in a token of bare LaTeX
_BASE_RE = re.compile(r"[a-z]+-(\d{1,3})")  # "base-10" (an upper-case "OAO-1" is a name)
# an element's name before an isotope's mass number: "carbon-14", "uranium-235" name an isotope, they count nothing
_ISOTOPE_WORDS = {
    *("hydrogen", "helium", "lithium", "carbon", "nitrogen", "oxygen", "fluorine", "sodium", "magnesium"),
    *("phosphorus", "sulfur", "sulphur", "chlorine", "argon", "potassium", "calcium", "iron", "cobalt", "nickel"),
    *("krypton", "strontium", "technetium", "iodine", "xenon", "caesium", "cesium", "lead", "polonium", "radon"),
    *("radium", "thorium", "uranium", "plutonium", "americium", "tritium", "deuterium"),
}
# a number written out as an arithmetic step with no spaces: "8*2=16", "4=12", "12/3=4", "8=" (each number apart)
_ARITH_PIECE = rf"[$€£¥]?(?:{DIGITS_PATTERN})(?:/(?:\d*\.)?\d+)?"
_ARITH_RE = re.compile(rf"(?:{_ARITH_PIECE})?(?:[=+*×x÷−-](?:{_ARITH_PIECE}))*=?")
# a step of arithmetic with brackets written with no spaces: "8+(8*2)=24" (each number apart)
_BRACKET_ARITH_RE = re.compile(rf"[(]*(?:{_ARITH_PIECE})[)]*(?:[=+*×x÷−-][(]*(?:{_ARITH_PIECE})[)]*)*=?")
# a formula in letters written as plain text with no spaces: "x=30*(100/200)", "2x+5=15", "x+x+x+3x",
# "(X+2)*(X+2+2)=80", "X+25", "Total:x+5=9": single-letter variables, numbers, operators and brackets, with "=", two
# letters, a coefficient or the letter x, y, z or n; every literal is read, as in a formula, a unary minus with its
# number ("x=-5"), a fraction that is not whole as one ("3/4*X", "(1/2)x"; "n=240/5" divides, and so does a
# bracketed ratio not in lowest terms, "(100/200)"). No such formula: "E=mc2", "2H2+O2", "J1149.5+6663" (a letter
# before a letter or a digit: a word, a subscript, an identifier), "20x$1=$20", "25x.4=10" (an x that multiplies
# numbers, read elsewhere), "C++11", "x==2", "T+5" (one other letter alone), "B-52" (no "=", "+", "*" or "^"),
# "5m^2" (a unit's exponent), "50K+", "$2K+$3K" (a scale letter)
_LETTER_FORMULA_RE = re.compile(r"[0-9A-Za-z.,$()+\-*/^=×÷−]*")
_LETTER_FORMULA_OPERATORS = set("=+*^×÷")
_NOT_A_LETTER_FORMULA_RE = re.compile(
    r"[A-Za-z][A-Za-z0-9$.]|\+\+|--|==|\dm\^|\d[KMB](?![A-Za-z])|\$\d[\d.,]*[kKmMbB](?![A-Za-z])"
)
_LETTER_FORMULA_NUMBER_RE = re.compile(
    rf"(?P<sign>(?<![\w).])[-−])?(?<![A-Za-z0-9.])(?P<currency>\$)?(?P<number>{DIGITS_PATTERN})"
    r"(?:/(?P<den>\d+)(?![\d.]))?"
)
_ARITH_PIECE_RE = re.compile(rf"(?P<currency>[$€£¥])?(?P<number>{DIGITS_PATTERN})(?:/(?P<den>(?:\d*\.)?\d+))?")
# words that a number word is part of, not a number: "non-zero", "half-life", "half-brother"
_HYPHEN_PREFIXES = {"non"}
# words before a hyphen that keep the number word after it a number: "two-and-a-half", "best-of-three", "top-ten"
_COMPOUND_NUMBER_PREFIXES = {"a", "an", "and", "to", "on", "by", "of", "for", "in", "per", "or", "the", "top", "under"}
_COMPOUND_NUMBER_PREFIXES |= {"over", "mid", "base", "baker"}  # "the base-eight number", "a baker-dozen"
_HALF_COMPOUNDS = {"life", "lives", "brother", "brothers", "sister", "sisters", "sibling", "siblings", "moon", "truth"}
_HALF_COMPOUNDS |= {"hearted", "heartedly", "wit", "wits", "baked", "court", "back", "backs", "mast"}
_HALF_COMPOUNDS |= {"time", "term"}  # "at half-time", "the half-term break": names of a break, not half of one
_HALF_COMPOUNDS |= {"price"}  # "half-price pizzas": a kind of offer
# words that make "one-..." a word of its own: "one-way ticket", "one-off", "one-sided", "one-to-one", "one-time fee"
_ONE_COMPOUNDS = {"way", "off", "offs", "sided", "liner", "liners", "stop", "of", "to", "on", "time", "shot", "size"}
# "One moment please!", "One second, please": an idiom asking to wait, not a count
_WAIT_WORDS = {"moment", "second", "sec", "minute"}
# a unit or a currency word after one digit and one group of three makes them one number ("3 500 MB", "5 000 euros");
# before another word they are two ("2 100 dollar bills" are two hundred-dollar bills)
_GROUP_UNITS = {
    *("kb", "mb", "gb", "tb", "bytes", "km", "m", "cm", "mm", "kg", "g", "mg", "t", "l", "ml", "w", "kw", "mw"),
    *("hz", "khz", "mhz", "v", "mah", "kwh", "ft", "lb", "lbs", "km²", "m²", "km^2", "m^2", "°c", "°f", "k"),
    *("dollars", "euros", "pounds", "yen", "francs", "rupees", "yuan", "pesos", "tonnes", "tons", "metres", "meters"),
    *("kilometres", "kilometers", "miles", "feet", "kilograms", "grams", "litres", "liters", "gallons", "people"),
    *("inhabitants", "residents", "visitors", "users", "copies", "units", "acres", "hectares", "words", "years"),
}
_SPACES = " \u00a0\u2009\u202f"
# a scale ordinal after a number and one of its owners is a rank: "its 10 millionth visitor", "the 5 thousandth"
_SCALE_ORDINALS = {"hundredth", "thousandth", "millionth", "billionth"}
_OWNERS = {"the", "its", "our", "their", "his", "her", "my", "your"}
# scale words abbreviated and written apart, as reports write them: "$1.2 bn", "4.5 bln", "300 mln"
_SCALE_ABBREVIATIONS = {"bn": 10**9, "bln": 10**9, "mln": 10**6, "trn": 10**12}
# a scale suffix set apart by a space, read only where the number stands alone (" 2.33 k"): in a sentence "10 k" is
# as often ten kilometres or a unit k
_SUFFIX_SCALES = {"k": 10**3, "K": 10**3, "M": 10**6, "B": 10**9, "bn": 10**9, "T": 10**12}
# a year at the end of a clause after "for": "a deficit of (€ 820,000) for 2024." (not "for 2024 dollars")
_CLAUSE_END = {".", ",", ";", ":", ")", "!", "?", ""}
_EXCHANGE_VERBS = {"sell", "buy", "pay", "rent", "trade", "price", "cost", "offer", "charge", "lease", "exchange"}
_EXCHANGE_VERBS |= {"auction", "purchase", "bid", "swap", "spend", "earn", "get", "ask", "list"}
# a command that opens a sentence, tagged a noun before its count: "Order 3 items", "Buy 2, get 1 free"
_COMMAND_VERBS = {*_EXCHANGE_VERBS, "order", "get", "take", "add", "use", "cut", "mix", "choose", "pick", "give"}
_COMMAND_VERBS |= {"send", "bring", "put", "remove", "select", "draw", "bake", "make", "save", "book", "reserve"}
_COMMAND_VERBS |= {"compute", "calculate", "round", "express", "evaluate", "simplify", "convert", "find", "solve"}
# a unit symbol with its exponent, as science writes units without carets: "m s-1", "kg m-3", "mol L-1"
_UNIT_EXPONENT_RE = re.compile(r"(?:s|m|g|kg|mg|cm|mm|km|mol|L|l|h|min|K|J|W|N|Pa|Hz|yr|d)-[1-4]")
_ORDINAL_FRACTION_RE = re.compile(r"(\d+)/(\d+)(?:th|rd|nd|st)s?")  # "3/4ths", "2/3rds", "1/3rd"
# two amounts with their units in one token: "180C/160C" (an oven, then the same oven with a fan)
_UNIT_PAIR_RE = re.compile(
    rf"(?P<n1>{DIGITS_PATTERN})(?P<u1>°?[A-Za-z]{{1,3}})/(?P<n2>{DIGITS_PATTERN})(?P<u2>°?[A-Za-z]{{1,3}})"
)
_DECIMAL_OVER_RE = re.compile(r"(?P<n1>\d+\.\d+)/(?P<n2>\d+(?:\.\d+)?)")  # "4.5/5", "9.2/10"
_BLOOD_PRESSURE_RE = re.compile(r"(\d{2,3})/(\d{2,3})")  # "120/80 mmHg": systolic over diastolic
_FEET_INCHES_RE = re.compile(r"(\d{1,2})['′](\d{1,2}(?:\.\d+)?)[\"″]?")  # a height: 6'2", 5′10″
# two numbers glued by a multiplication sign: "8x2" of "8x2^10", "4×6" (a power of ten "2x10-5" is read apart)
_TIMES_RE = re.compile(rf"({DIGITS_PATTERN})[×x]({DIGITS_PATTERN})")
# numbers joined by commas with no space, as a point or a tuple is written in plain text: "(-2,4)", "(3,-8)"
_TUPLE_RE = re.compile(r"-?\d+(?:\.\d+)?(?:,-?\d+(?:\.\d+)?)+")
_TUPLE_NUMBER_RE = re.compile(r"-?(\d+(?:\.\d+)?)")
_ARTICLES = {"a", "an"}
# words after "once" that make it no count: a clause it opens ("stop once the light turns green"), an idiom
_CLAUSE_OPENERS = {"the", "this", "that", "these", "those", "i", "you", "he", "she", "it", "we", "they", "everyone"}
_CLAUSE_OPENERS |= {"again", "more", "upon"}  # "once again", "once more", "once upon a time": not a count
# particles of a phrasal verb that "once" may follow and still count it: "goes out once a week", "came up once"
_VERB_PARTICLES = {"up", "out", "in", "back", "down", "over", "off", "on", "around", "away", "by", "through"}
# words after which "once" counts: "more than once", "exactly once", "at least once", "only once"
_ONCE_COUNTED_AFTER = {"than", "exactly", "least", "most", "only", "just", "never"}
# spans "once a ..." counts over: "once a fortnight", "once every week", "once per season"
_ONCE_PER = {"day", "week", "fortnight", "month", "year", "hour", "minute", "season", "term", "night", "morning"}
# days of the week as messages and notes write them, capitalised ("Sat 6 till 11", "on Thurs, 7.30")
_WEEKDAYS = {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "mon", "tue", "tues"}
_WEEKDAYS |= {"wed", "weds", "thu", "thur", "thurs", "fri", "sat", "sun"}
# Words that are a number on their own (not part of a run of number words); "dozen" needs "a" before it.
_SINGLE_WORDS = {
    "half": Fraction(1, 2),
    "twice": Fraction(2),
    "double": Fraction(2),
    "triple": Fraction(3),
    "thrice": Fraction(3),
    "quadruple": Fraction(4),
    "quarter": Fraction(1, 4),
}
# multiples that are also kinds of things ("an ordered triple", "a double room")
_KIND_WORDS = {"double", "triple", "quadruple"}
# nouns that "double" or "triple" before them make a kind of: "double cream", "a double bed"
_KIND_NOUNS = {"cream", "bed", "beds", "room", "rooms", "glazing", "espresso", "helix", "bond", "bonds", "agent"}
_KIND_NOUNS |= {"jump", "axel", "crown"}  # events and titles: "her triple jump", "a double axel", "the triple crown"
_KIND_NOUNS |= {"fault", "faults", "decker", "deckers"}  # "two double faults", "a double decker"
_KIND_DETERMINERS = {"a", "an", "the", "this", "that", "each", "every", "another", "any", "some"}
# nouns of an amount that "a double ..." multiplies: "a double batch", "a triple portion"
_AMOUNT_NOUNS = {"portion", "recipe", "dose", "amount", "helping", "quantity", "order", "shift", "share", "size"}
# Nouns that are a number of years after "a": "a decade from now" is 10 years, "a century" 100.
_YEARS_WORDS = {"decade": 10, "century": 100}
# words before "a century" that leave it no number of years: "for over a century" (about so long), "a quarter of a
# century" (the fraction is the quantity)
_HEDGES_BEFORE_A_PERIOD = {"over", "nearly", "almost", "than", "under", "of"}
# Measures that "a third", "a fifth" ... may be a fraction of ("a third cup"); before another noun the word is a rank.
_FRACTION_OF = {
    *("cup", "pound", "lb", "ounce", "oz", "gallon", "quart", "pint", "liter", "litre", "teaspoon", "tablespoon"),
    *("mile", "inch", "foot", "yard", "meter", "metre", "kilometer", "km", "acre", "kilogram", "kg", "gram"),
    *("second", "minute", "hour", "day", "week", "month", "year", "tank", "mile"),
}
# Words right after a number that make it a count, not a name: "took from Griffin 3 less than ..." (not "Voyager 2").
_COUNT_AFTER = {"less", "more", "fewer", "times", "greater", "smaller", "larger", "older", "younger", "percent", "%"}
_COUNT_AFTER |= {'"', "″", "inch", "inches", "in.", "mm", "cm"}  # "Wrench 8\"": a size, not the name's number
# every word that may start a number; words_at looks no further at any other word
# the numbers of "twofold", "tenfold", "hundredfold": a multiplier
_FOLD_VALUES = {**UNIT_WORDS, **TENS_WORDS, "hundred": 100, "thousand": 1000}
_NUMBER_WORDS = {
    *UNIT_WORDS,
    *TENS_WORDS,
    *_HUNDRED_AND_SCALES,
    *ORDINAL_DENOMINATORS,
    *_SINGLE_WORDS,
    *_YEARS_WORDS,
    "dozen",
}
_SINGULAR_DENOMINATORS = {w: d for w, d in ORDINAL_DENOMINATORS.items() if not w.endswith(("s", "halves"))}
# Nouns that measure rather than count: "3 hours", "5 inch heels" (other nouns are the counted object).
_MEASURES = {
    "inch",
    "foot",
    "feet",
    "yard",
    "mile",
    "meter",
    "metre",
    "centimeter",
    "centimetre",
    "millimeter",
    "kilometer",
    "cm",
    "mm",
    "km",
    "m",
    "kg",
    "g",
    "gram",
    "kilogram",
    "pound",
    "lb",
    "ounce",
    "oz",
    "ton",
    "liter",
    "litre",
    "ml",
    "gallon",
    "quart",
    "pint",
    "cup",
    "tablespoon",
    "teaspoon",
    "tsp",
    "tbsp",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "year",
    "dollar",
    "cent",
    "penny",
    "euro",
    "%",
    "percent",
    "degree",
    "mph",
    "acre",
    "dozen",
    "page",
    "time",
    "calorie",
    "piece",
    "slice",
    "box",
    "bag",
    "pack",
    "skein",
    "unit",
    "meal",
    "serving",
    "batch",
    "bottle",
    "can",
    "jar",
    "carton",
    "bunch",
    "pair",
    "set",
    "row",
    "lap",
    "step",
    "square",
    "cubic",
}
# measures that are a unit when written between a number and a noun ("10 oz servings", "41 degree water"), unlike a
# container or a count ("125 bottle caps", "16 unit squares") or a shape word ("432 square centimeters")
_MEASURE_UNITS = _MEASURES - {"square", "cubic", "unit", "piece", "slice", "box", "bag", "pack", "skein", "meal"}
_MEASURE_UNITS -= {"serving", "batch", "bottle", "can", "jar", "carton", "bunch", "pair", "set", "row", "lap", "step"}
_MEASURE_UNITS -= {"time", "page", "dozen", "calorie", "%", "percent", "dollar", "cent", "penny", "euro"}
_QUESTION_STARTS = {
    "find",
    "compute",
    "calculate",
    "determine",
    "evaluate",
    "what",
    "how",
    "which",
    "who",
    "when",
    "where",
    "express",
    "simplify",
    "solve",
    "show",
    "prove",
    "give",
    "write",
    "list",
    "enter",
    "estimate",
    "factor",
    "expand",
    "rationalize",
    "convert",
}


@dataclass(frozen=True)
class ProblemSentence:
    """A sentence of a problem: its index, character span in the source, text, and whether it is the question."""

    index: int
    span: tuple[int, int]
    text: str
    is_question: bool


def problem_sentences(graph: MathSyntaxGraph) -> list[ProblemSentence]:
    """The sentences of ``graph`` in order, the question among them marked.

    The question is the last sentence with a ``?``, or else the last one that starts
    with an asking or commanding word (``How``, ``Find``, ``Compute``...) or whose main
    verb is such a command with no subject (``If ..., calculate Allen's age.``); a
    problem may have none.
    """
    spans: dict[int, list[int]] = {}
    first_word: dict[int, str] = {}
    subjects = {edge.src for edge in graph.edges if edge.relation in ("dep:nsubj", "dep:nsubjpass", "dep:expl")}
    commands = {  # sentences whose main verb is a bare command: "If ..., calculate Allen's age"
        graph.nodes[edge.dst].sentence
        for edge in graph.edges
        if edge.src == 0
        and graph.nodes[edge.dst].kind == "word"
        and graph.nodes[edge.dst].upos == "VERB"
        and (graph.nodes[edge.dst].lemma or "").lower() in _QUESTION_STARTS
        and edge.dst not in subjects
    }
    for node in graph.nodes:
        if node.sentence is None or node.span is None:
            continue
        bounds = spans.setdefault(node.sentence, [node.span[0], node.span[1]])
        if node.span[0] <= bounds[0]:
            bounds[0] = node.span[0]
            if node.kind == "word":
                first_word[node.sentence] = (node.lemma or node.label).lower()
        bounds[1] = max(bounds[1], node.span[1])
    order = sorted(spans)
    texts = {i: graph.text[spans[i][0] : spans[i][1]] for i in order}
    asking = [i for i in order if "?" in texts[i]] or [
        i for i in order if first_word.get(i) in _QUESTION_STARTS or i in commands
    ]
    question = asking[-1] if asking else None
    return [ProblemSentence(i, (spans[i][0], spans[i][1]), texts[i], i == question) for i in order]


def find_quantities(graph: MathSyntaxGraph) -> tuple[Quantity, ...]:
    """Every quantity of ``graph`` in text order (see the module docstring for the rules)."""
    sentences = problem_sentences(graph)
    question = next((s.index for s in sentences if s.is_question), None)
    reader = _TreeReader(graph)
    found: list[Quantity] = []
    runs: list[list[Node]] = []
    for tokens in reader.sentence_tokens():
        if runs and (runs[-1][-1].label in _OPEN_OPERATORS or tokens[0].label in _OPEN_OPERATORS):
            runs[-1] = runs[-1] + tokens  # "−1.602 | × 10⁻¹⁹ C": the tagger split the sentence at an operator
        else:
            runs.append(tokens)
    for tokens in runs:
        found.extend(_TokenScanner(graph, reader, tokens, question).scan())
    found.extend(formula_quantities(graph, question))
    return tuple(sorted(found, key=lambda q: (q.span[0], q.node)))


class _TreeReader:
    """Heads, children and tokens of a graph's dependency tree."""

    def __init__(self, graph: MathSyntaxGraph):
        self.graph = graph
        self.head: dict[int, tuple[int, str]] = {}
        self.children: dict[int, list[tuple[str, int]]] = {}
        for edge in graph.edges:
            self.head[edge.dst] = (edge.src, edge.relation)
            self.children.setdefault(edge.src, []).append((edge.relation, edge.dst))

    def sentence_tokens(self) -> list[list[Node]]:
        by_sentence: dict[int, list[Node]] = {}
        for node in self.graph.nodes:
            if node.kind in ("word", "math") and node.sentence is not None and node.span is not None:
                by_sentence.setdefault(node.sentence, []).append(node)
        return [sorted(tokens, key=lambda n: n.span[0]) for _, tokens in sorted(by_sentence.items())]

    def word(self, node_id: int | None) -> Node | None:
        if node_id is None or node_id == 0:
            return None
        node = self.graph.nodes[node_id]
        return node if node.kind == "word" else None

    def parent(self, node_id: int) -> tuple[Node | None, str]:
        src, relation = self.head.get(node_id, (0, ""))
        return self.word(src), relation

    def child(self, node_id: int, relations: tuple[str, ...]) -> Node | None:
        for relation, dst in self.children.get(node_id, []):
            if relation in relations and self.word(dst) is not None:
                return self.graph.nodes[dst]
        return None

    def of_object(self, node_id: int) -> Node | None:
        """The noun of an ``of`` phrase under ``node_id`` (``skeins of wool``), past a measure (``liters of juice``)."""
        for relation, dst in self.children.get(node_id, []):
            prep = self.word(dst)
            if relation == "dep:prep" and prep is not None and prep.label == "of":
                noun = self.child(dst, ("dep:pobj",))
                if noun is not None and _is_measure(noun):
                    return self.of_object(noun.id) or noun
                return noun
        return None

    def unit_and_object(self, node_ids: list[int]) -> tuple[str | None, str | None]:
        """Unit and counted object of the number spelled by ``node_ids``, from the tree around it."""
        inside = set(node_ids)
        noun = None
        for node_id in node_ids:
            parent, _ = self.parent(node_id)
            # a number counts a noun after it; a noun before it ("pie and 2½ cakes") is a parsing slip
            after = (
                parent is not None and parent.span is not None and parent.span[0] > self.graph.nodes[node_id].span[0]
            )
            if after and parent.id not in inside and parent.upos in ("NOUN", "PROPN"):
                noun = parent
                break
        if noun is None:  # "3/4 of the rest", "half of them"
            for node_id in node_ids:
                counted = self.of_object(node_id)
                if counted is not None:
                    return None, counted.label
            return None, None
        measured = self.of_object(noun.id)
        above, relation = self.parent(noun.id)
        compound_head = above if relation == "dep:compound" and above is not None and above.upos == "NOUN" else None
        if measured is not None or compound_head is not None or _is_measure(noun):
            counted = measured or compound_head
            return noun.label, counted.label if counted is not None else None
        return None, noun.label


def _is_measure(node: Node, measures: set[str] = _MEASURES) -> bool:
    """The word measures rather than counts (``hours``, ``oz``, ``m²``, ``km^2``: see ``_MEASURES``)."""
    word = (node.lemma or node.label).lower().rstrip(".")
    return word in measures or word.rstrip("²³").removesuffix("^2").removesuffix("^3") in measures


def _plural(node: Node | None) -> bool:
    """The word is a plural (its label is not its lemma): ``visitors``, ``pounds``."""
    return node is not None and node.label != (node.lemma or node.label).lower()


def _wordlike(label: str | None) -> str | None:
    """``label`` when it is a word; ``None`` for a number or a sign ("10% of $200" has no object "200")."""
    return label if label is not None and any(c.isalpha() for c in label) else None


class _TokenScanner:
    """Reads the quantities of one sentence's tokens, left to right."""

    def __init__(self, graph: MathSyntaxGraph, reader: _TreeReader, tokens: list[Node], question: int | None):
        self.graph, self.reader, self.tokens, self.question = graph, reader, tokens, question
        self.words = {t.label for t in tokens}
        self.dates: set[int] = set()  # tokens read as a date or a year: the second year of a range follows one

    def text_of(self, i: int) -> str:
        return self.tokens[i].label if 0 <= i < len(self.tokens) else ""

    def raw(self, i: int) -> str:
        """Token ``i`` as written (case kept: ``50K``, ``3M``, ``May``), or its label where the source differs."""
        if not 0 <= i < len(self.tokens):
            return ""
        token = self.tokens[i]
        written = self.graph.text[token.span[0] : token.span[1]]
        return written if written.lower() == token.label else token.label

    def capitalised(self, i: int) -> bool:
        return self.raw(i)[:1].isupper()

    def adjacent(self, i: int, j: int) -> bool:
        """Tokens ``i`` and ``j = i + 1`` touch (no space between them)."""
        return 0 <= i and j < len(self.tokens) and self.tokens[i].span[1] == self.tokens[j].span[0]

    def glued_end(self, i: int) -> int:
        """The last word token of the run glued to token ``i`` with no space (``10 ^ 3``, ``555 - 1234``)."""
        j = i
        while j - i < 6 and self.adjacent(j, j + 1) and self.tokens[j + 1].kind == "word":
            j += 1
        return j

    def joined(self, i: int, j: int) -> str:
        return "".join(self.raw(k) for k in range(i, j + 1))

    @cached_property
    def letters_glued_before(self) -> list[bool]:
        """Per token, whether a token glued to it before it, in its run with no space, holds a letter (one pass,
        so that a run of thousands of glued tokens is read in linear time)."""
        flags, seen = [], False
        for k in range(len(self.tokens)):
            seen = seen and self.adjacent(k - 1, k)
            flags.append(seen)
            seen = seen or any(c.isalpha() for c in self.raw(k))
        return flags

    @cached_property
    def last_quote(self) -> int:
        """The index of the sentence's last quotation mark token (``'``, ``’``), -1 where it has none."""
        return max((k for k, token in enumerate(self.tokens) if token.label in ("'", "’")), default=-1)

    def scan(self) -> list[Quantity]:
        found: list[Quantity] = []
        i = 0
        while i < len(self.tokens):
            token = self.tokens[i]
            result = None
            if token.kind == "word":
                result = self.letter_formula_at(i)
                if result is None:
                    result = self.digits_at(i) if _STARTS_LIKE_NUMBER_RE.match(token.label) else self.words_at(i)
                result = result or self.inner_number_at(i)
            if result is None:
                i += 1
                continue
            quantities, i = result
            found.extend(quantities)
        return found

    def inner_number_at(self, i: int) -> tuple[list[Quantity], int] | None:
        """A number at the end of a word token: the exponent of ``(AC)^2`` written as text, the ``10`` of ``base-10``."""
        written = self.raw(i)
        if _UNIT_EXPONENT_RE.fullmatch(written):
            return None  # "s-1" of "12 m s-1": the unit's exponent, not a number
        fractions = list(_TEXT_FRACTION_RE.finditer(written))
        if fractions:  # "\frac{3}{4" of "is \frac{3}{4} of the total": LaTeX with no math delimiters around it
            offset = self.tokens[i].span[0]
            return [
                self.quantity(
                    (offset + m.start(), offset + m.end()),
                    Fraction(int(m.group(1)), int(m.group(2))),
                    "fraction",
                    self.tokens[i],
                    None,
                    None,
                )
                for m in fractions
                if int(m.group(2)) != 0
            ], i + 1
        argument = _ARGUMENT_RE.fullmatch(written)
        reference = written.count("/") > 1 or self.adjacent(i, i + 1) and self.text_of(i + 1) == "/"
        if argument is not None and re.match(r"[A-Z]{2,}/", written) and reference:
            return [], i + 1  # "WO/2291/B", "REF/2023/045": a reference number between slashes, a name (not "MPH/2")
        if argument is not None:  # "f(2", "C(10" of "C(10, 3)", "\boxed{42": the tokenizer kept the call together
            value, form = parse_number(argument.group("number"))
            offset = self.tokens[i].span[0]
            span = (offset + argument.start("sign"), offset + argument.end("number"))
            value = -value if argument.group("sign") else value
            return [self.quantity(span, value, form, self.tokens[i], None, None)], i + 1
        match = _EXPONENT_RE.fullmatch(written) or _BASE_RE.fullmatch(written)
        if match is not None and written.split("-")[0].lower() in _ISOTOPE_WORDS:
            return None  # "carbon-14": an isotope's name
        if match is None:
            return None
        start = self.tokens[i].span[0] + match.start(1)
        value = Fraction(int(match.group(1)))
        return [
            self.quantity((start, start + len(match.group(1))), value, "integer", self.tokens[i], None, None)
        ], i + 1

    def make(
        self,
        first: int,
        last: int,
        value: Fraction,
        form: str,
        unit: str | None = None,
        number_tokens: tuple[int, int] | None = None,
        counted: str | None = None,
    ) -> Quantity:
        start, end = self.tokens[first].span[0], self.tokens[last].span[1]
        lo, hi = number_tokens or (first, last)
        of_noun = self.of_noun_after(hi + 1) if last == hi else None
        if of_noun is not None:  # "½ of the pie": read off the words, the tagger takes "½" for a noun
            found_unit, found_object = None, of_noun
        else:
            found_unit, found_object = self.reader.unit_and_object([self.tokens[k].id for k in range(lo, hi + 1)])
        found_unit, counted = _wordlike(found_unit), counted or _wordlike(found_object)
        if unit is not None and found_unit is not None and found_unit.lower() in _PERCENT | {unit, "cent"}:
            found_unit = None  # the sign itself was read as the noun ("25 %", "15 per cent")
        after = self.tokens[hi + 1] if hi + 1 < len(self.tokens) else None
        if found_unit is None and counted is None and after is not None and after.upos == "NOUN" and last == hi:
            # the parser hung the number elsewhere, but the noun right after it is what it counts ("-5 degrees")
            if (after.lemma or after.label).lower() in _MEASURES:
                found_unit = after.label
            else:
                counted = _wordlike(after.label)
        elif after is not None and last == hi and _is_measure(after, _MEASURE_UNITS) and after.label != found_unit:
            head, _ = self.reader.parent(after.id)  # "10 oz servings": a measure between the number and its noun
            if head is not None and head.label in (found_unit, counted) and head.span[0] > after.span[0]:
                found_unit, counted = after.label, head.label
        if found_unit is None and counted is None and after is not None and after.label == "of":
            of_noun = self.reader.child(after.id, ("dep:pobj",))  # "3/4 of the rest" with "of" on the verb
            counted = of_noun.label if of_noun is not None and of_noun.upos in ("NOUN", "PROPN") else None
        return self.quantity((start, end), value, form, self.tokens[lo], unit or found_unit, counted)

    def of_noun_after(self, j: int) -> str | None:
        """The noun of an ``of`` phrase at token ``j`` (``of the pie``, ``of her red cars``), else ``None``."""
        if self.text_of(j) != "of":
            return None
        k = j + 1
        while k < len(self.tokens) and self.tokens[k].upos in ("DET", "ADJ", "PRON", "NUM", "SYM"):
            k += 1
        return self.tokens[k].label if k < len(self.tokens) and self.tokens[k].upos in ("NOUN", "PROPN") else None

    def quantity(
        self, span: tuple[int, int], value: Fraction, form: str, node: Node, unit: str | None, counted: str | None
    ) -> Quantity:
        return Quantity(
            text=self.graph.text[span[0] : span[1]],
            span=span,
            value=value,
            form=form,
            node=node.id,
            sentence=node.sentence,
            in_question=node.sentence is not None and node.sentence == self.question,
            unit=unit,
            object=counted,
        )

    # ------------------------------------------------------------------ numbers in digits
    def digits_at(self, i: int) -> tuple[list[Quantity], int] | None:
        if self.list_marker(i):
            return [], i + 2  # "3. **Transitivity**: ...", "2) Next, we add": an item's number in a list, no count
        if _RATIO_RE.fullmatch(self.text_of(i)):
            return self.ratio_at(i)
        bracketed = self.bracket_arithmetic_at(i)
        if bracketed is not None:
            return bracketed
        if _HEX_RE.fullmatch(self.raw(i)):
            return [], i + 1  # "Error 0x80070005"
        if re.fullmatch(r"\+\d{1,3}", self.raw(i)) and self.spaced_phone_end(i + 1) is not None:
            return [], self.spaced_phone_end(i + 1) + 1  # "+44 20 7946 0321": a country code and its number
        if (
            re.fullmatch(r"\+\d{1,3}", self.raw(i))
            and self.text_of(i + 1) == "("
            and self.phone_end(i + 2, self.glued_end(i + 2))
        ):
            return [], i + 1  # "+1 (555) 010-2299": a country code before a bracketed area code
        end = self.glued_end(i)
        code = self.code_run_end(i)
        if code is not None:
            return [], code + 1  # "1Z 999 AA1 01 2345 6784": a tracking number, every group of it a name
        phone = self.phone_end(i, end)
        phone = self.spaced_phone_end(i) if phone is None else phone
        if phone is not None:
            return [], phone + 1
        name = self.name_end(i)
        if name is not None:
            return [], name + 1  # "#48213", "978-0-14-044913-6", "the 747-8 can", "the Pixel 8 were"
        season = self.season_end(i)
        if season is not None:
            return [], season + 1  # "the 2013-14 season"
        if self.is_identifier(i):
            return [], end + 1  # "J1149.5+6663", "06F6"
        if re.fullmatch(r"\d+[A-Za-z]\.?", self.raw(i)) and self.names_one_of(i):
            return [], i + 1  # "Flat 4B", "Gate 12A": a label, not 4 billion
        if re.fullmatch(r"\d+[ADEHIJNPQRSUXYZ]", self.raw(i)) and self.text_of(i - 1) == "the":
            after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
            if after is None or after.upos in ("ADP", "VERB", "AUX", "PUNCT", "CCONJ"):
                return [], i + 1  # "Catch the 88A from": a route named (not "the 9V", "the 5K": a unit, a scale)
        if re.fullmatch(r"\d+[A-Z]\.?", self.raw(i)) and self.text_of(i - 1) in ("is", "was", ":"):
            if self.text_of(i - 2).rstrip(".") in _ANY_LABEL_NOUNS:
                return [], i + 1  # "Your seat is 42C": a label said with a verb, not 42 °C
        read = self.read_glued(i, end)
        if read is None:
            return self.glued_number(i)  # "4km^2", "8- to 16-meter", "3x"; None for "2nd", "12/25/2020"
        (value, form), last, negative, currency, trim = read
        if self.not_a_quantity(i, last, value, form):
            self.dates.add(i)
            return [], last + 1
        pressure = _BLOOD_PRESSURE_RE.fullmatch(self.raw(i)) if form == "fraction" and last == i else None
        if pressure is not None and not (70 <= int(pressure.group(1)) <= 250 and 40 <= int(pressure.group(2)) <= 150):
            pressure = None  # systolic over diastolic only
        if pressure is not None and (self.text_of(i + 1) in ("mmhg", "mm") or self.words & {"pressure", "bp"}):
            return self.pieces(i, pressure, (1, 2), (None, None)), i + 1  # "120/80 mmHg": two, not the fraction 3/2
        if form == "fraction" and last == i and value.denominator == 1:
            division = self.division_at(i)
            if division is not None:
                return division, i + 1  # "$14/2 = $7": 14 divided by 2, not the fraction 7
        first, unit = i, currency
        if self.raw(last).rstrip(".").endswith("K") and currency is None and self.words & _TEMPERATURE_CUES:
            value, unit = value / 1000, "K"  # "573.15K" next to "300 °C" is a temperature in kelvin
        mixed = parse_number(self.raw(last + 1)) if last == i and not self.adjacent(i, i + 1) else None
        if form == "integer" and mixed is not None and mixed[1] == "fraction" and 0 < mixed[0] < 1:
            value, form, last = value + mixed[0], "fraction", last + 1  # "1 1/2", "2 ½"
        if not negative and self.text_of(i - 1) in _MINUS and self.adjacent(i - 1, i):
            negative = not self.adjacent(i - 2, i - 1)  # "-5", "−4"; not the "-" of a range "5-10"
            first = i - 1 if negative else first
        elif (
            not negative
            and i == 1
            and self.text_of(0) in _MINUS
            and self.stands_alone(0, last + int(self.raw(last + 1) in _SUFFIX_SCALES))
        ):
            negative, first = True, 0  # "- 1 4/5" written alone: a sign set apart by a space
        if unit is None and self.text_of(first - 1) in _CURRENCY:
            unit, first = self.text_of(first - 1), first - 1  # "$5", "$ 5"
        elif unit is None and self.raw(first - 1) in _CURRENCY_CODES and not self.adjacent(first - 1, first):
            unit, first = self.raw(first - 1), first - 1  # "CHF 480"
            if not negative and self.text_of(first - 1) in _MINUS and self.adjacent(first - 1, first):
                negative, first = True, first - 1
        if (
            unit is None
            and self.text_of(first - 1) == "("
            and self.text_of(first - 2) in _CURRENCY
            and self.text_of(last + 1) == ")"
        ):  # "$(4.2) million": an accounting negative with the currency sign outside the brackets
            unit, first, negative, last = self.text_of(first - 2), first - 2, not negative, last + 1
        value, power_last = self.notation_after(value, form, last)
        if power_last != last:
            last, trim = power_last, int(self.raw(power_last).endswith("."))  # "6.022 × 10²³." ends a sentence
        form = "decimal" if form == "integer" and value.denominator != 1 else form
        scale = self.scale_word(last + 1)
        if scale is not None:
            value, last = value * scale, last + 1  # "1.5 million"
        elif form in ("integer", "decimal") and self.range_scale(first, last, value) is not None:
            value *= self.range_scale(first, last, value)  # the 1.5 of "between $1.5 and $2 billion" is 1.5 billion
        elif unit in _CURRENCY and self.adjacent(last, last + 1) and self.raw(last + 1).rstrip(".") in ("m", "mn"):
            # "£4.1m", "$3m": money is never in metres, so a lower-case "m" glued to an amount is a million
            value, last, trim = value * 10**6, last + 1, int(self.raw(last + 1).endswith("."))
        elif unit is None and self.adjacent(last, last + 1) and self.million_counts(last + 1):
            value, last = value * 10**6, last + 1  # "2.1m visitors": a million of what follows, not metres
        elif self.raw(last + 1) in _SUFFIX_SCALES and self.stands_alone(first, last + 1):
            value, last = value * _SUFFIX_SCALES[self.raw(last + 1)], last + 1  # " 2.33 k" written alone: 2330
        half = self.fraction_after(last + 1) if form == "integer" else None
        half = self.digit_fraction_after(first, last) if half is None and form == "integer" else half
        if half is not None:
            value, form, last = value + half[0], "fraction", half[1]  # "3 and a half", "3 and 1/2 pounds"
        if self.text_of(last + 1) in ("dozen", "dozens", "doz"):
            value, last = value * 12, last + 1  # "5 dozen" eggs are 60 eggs, "2 and a half dozen" 30, "2 doz."
        word_after = self.text_of(last + 1)
        if form == "integer" and unit is None and word_after in _SCALE_ORDINALS and self.text_of(first - 1) in _OWNERS:
            return [], last + 2  # "its 10 millionth visitor": a rank
        coins = ("halves", "quarters", "fourths")  # "3 quarters and 2 dimes" are coins
        denominator = ORDINAL_DENOMINATORS.get(word_after) if word_after not in coins else None
        if form == "integer" and unit is None and word_after.endswith("s") and self.text_of(last + 2) == "of":
            if denominator is not None and value < denominator:
                value, form, last = value / denominator, "fraction", last + 1  # "3 fifths of the class"
        if unit is None and self.currency_after(last):
            unit, last = self.text_of(last + 1), last + 1  # "175$", "45 €": the sign written after the amount
        ran = first > 0 and (self.tokens[first - 1].lemma or "").lower() in ("run", "walk", "jog")
        following = self.tokens[last + 1] if last + 1 < len(self.tokens) else None
        ran = ran and not (_plural(following) and following.upos == "NOUN")  # "run 20K stores": thousands of them
        if unit is None and self.raw(last)[-1:] in ("k", "K") and (self.text_of(last + 1) in _RACES or ran):
            value, unit = value / 1000, "km"  # a "10K race" is 10 kilometres; "ran 5k this morning" 5
        if (
            unit in _CURRENCY
            and self.text_of(first - 1) == "("
            and self.text_of(last + 1) == ")"
            and not (first > 1 and self.tokens[first - 2].upos in ("NOUN", "PROPN"))
            and self.text_of(first - 2) != "only"
        ):  # an accounting negative: "a loss of ($1.2 million)", "Refund: ($99.99)"; "at minimum wage ($8)" and a
            # cheque's "Eighty Pounds only (£80.00)" restate
            negative = not negative
        value = -value if negative else value
        number_last = last
        percent = self.percent_end(last + 1)
        if percent is not None:
            value, form, unit, last = value / 100, "percent", "%", percent
        elif unit is None and form in ("integer", "decimal") and self.percent_range_after(first, last):
            value, form, unit = value / 100, "percent", "%"  # the 50 of "from 50 to 80%" is 50%
        quantity = self.make(first, last, value, form, unit, number_tokens=(i, number_last))
        if trim:
            quantity = replace(quantity, span=(quantity.span[0], quantity.span[1] - trim), text=quantity.text[:-trim])
        return [quantity], last + 1

    def currency_after(self, last: int) -> bool:
        """A currency sign after the amount that ends at ``last`` (``5000$``, ``175 $``, ``45 €``), not one that opens
        the next amount (``5 $10 bills``)."""
        sign = last + 1
        if self.text_of(sign) not in _CURRENCY or self.tokens[sign].span[0] - self.tokens[last].span[1] > 1:
            return False
        return not (self.adjacent(sign, sign + 1) and _STARTS_LIKE_NUMBER_RE.match(self.text_of(sign + 1)))

    def stands_alone(self, first: int, last: int) -> bool:
        """Tokens ``first..last`` are all the sentence holds but punctuation (a number written on its own, as a
        list or a test of number readers writes it: ``- 10  k``)."""
        return all(
            not any(c.isalnum() for c in self.text_of(k)) for k in range(len(self.tokens)) if not first <= k <= last
        )

    def division_at(self, i: int) -> list[Quantity] | None:
        """``14/2`` of ``$14/2 = $7`` and ``200/25``: a whole-valued ``a/b`` in text is a division, two numbers (``$14``
        and ``2``); ``None`` where the token is not plain ``a/b``."""
        token = self.tokens[i]
        match = re.fullmatch(r"(\d+)/(\d+)", self.raw(i))
        if match is None or int(match.group(2)) <= 1:
            return None
        currency = self.text_of(i - 1) if self.text_of(i - 1) in _CURRENCY else None
        start = self.tokens[i - 1].span[0] if currency else token.span[0]
        numerator = (start, token.span[0] + match.end(1))
        denominator = (token.span[0] + match.start(2), token.span[1])
        return [
            self.quantity(numerator, Fraction(int(match.group(1))), "integer", token, currency, None),
            self.quantity(denominator, Fraction(int(match.group(2))), "integer", token, None, None),
        ]

    def scale_word(self, j: int) -> int | None:
        """The value of a scale word at ``j`` (``hundred``, ``million``), else ``None``."""
        word = self.text_of(j)
        return SCALE_WORDS.get(word) or _SCALE_ABBREVIATIONS.get(word) or (100 if word == "hundred" else None)

    def range_scale(self, first: int, last: int, value: Fraction) -> int | None:
        """The scale word written once for both ends of a range that this number opens: ``between $1.5 and $2
        billion``, ``3 to 4 million``, ``2 or 3 thousand`` (the other end is larger: the 800 of ``from 800 to 1.2
        million`` is 800)."""
        joiner = self.text_of(last + 1)
        if joiner not in ("to", "-", "–", "or") and not (joiner == "and" and self.text_of(first - 1) == "between"):
            return None
        k = last + 2 + int(self.text_of(last + 2) in _CURRENCY)
        if self.text_of(k) in UNIT_WORDS or self.text_of(k) in TENS_WORDS:  # "two to three million"
            total, end, _, _ = self.word_run(k)
            scale = self.scale_word(end)
            if scale is None or any(self.scale_word(m) for m in range(k, end)):
                return None
            other = Fraction(total, scale)
        else:
            read = parse_number(self.raw(k)) if _STARTS_LIKE_NUMBER_RE.match(self.text_of(k)) else None
            other, scale = (read[0] if read else None), self.scale_word(k + 1)
        return scale if other is not None and scale is not None and 0 < value < other else None

    def percent_range_after(self, first: int, last: int) -> bool:
        """The number ending at ``last`` opens a range whose other end has the percent sign: ``from 50 to 80%``,
        ``5-7%``, ``between 10 and 20%`` (the sign is written once for both ends)."""
        joiner = self.text_of(last + 1)
        if joiner not in ("to", "-", "–") and not (joiner == "and" and self.text_of(first - 1) == "between"):
            return False
        other = self.text_of(last + 2)
        return (
            _STARTS_LIKE_NUMBER_RE.match(other) is not None
            and parse_number(other) is not None
            and self.percent_end(last + 3) is not None
        )

    def arithmetic_at(self, i: int) -> list[Quantity] | None:
        """A step of arithmetic written as one token with no spaces (``8*2=16``'s ``2=16``, ``12/3=4``, ``8=``), or
        a product, sum or difference so written before a spaced ``=`` (``120*$0.25 = $30``, ``$1933-$108 = $1825``):
        each number apart, a whole-valued
        ``a/b`` or one with a decimal divisor as two numbers (``$14/2``, ``100/.25=400``), any other ``a/b`` as its
        fraction (``1/2=0.5``), else ``None``."""
        token = self.tokens[i]
        written = self.graph.text[token.span[0] : token.span[1]]  # offsets below are offsets in the source
        before_equals = self.text_of(i + 1) == "=" and re.search(r"\d[*×÷+−-][$€£¥]?\d", written)
        if not ("=" in written or before_equals) or written.lower() != token.label or not _ARITH_RE.fullmatch(written):
            return None
        found = []
        for piece in _ARITH_PIECE_RE.finditer(written):
            currency = piece.group("currency")
            start = token.span[0] + piece.start()
            if piece.start() == 0 and currency is None and self.text_of(i - 1) in _CURRENCY and self.adjacent(i - 1, i):
                currency, start = self.text_of(i - 1), self.tokens[i - 1].span[0]  # "$1933-$108 =": "$" a token apart
            value = parse_number(piece.group("number"))
            if value is None:
                return None
            den = piece.group("den")
            if den is None:
                found.append(self.quantity((start, token.span[0] + piece.end()), *value, token, currency, None))
                continue
            divisor = parse_number(den)
            if divisor is None or divisor[0] == 0:
                return None
            fraction = value[0] / divisor[0]
            if divisor[1] == "integer" and (fraction.denominator != 1 or divisor[0] == 1):  # "1/2=0.5": the fraction
                found.append(
                    self.quantity((start, token.span[0] + piece.end()), fraction, "fraction", token, None, None)
                )
                continue
            found.append(self.quantity((start, token.span[0] + piece.end("number")), *value, token, currency, None))
            found.append(
                self.quantity(
                    (token.span[0] + piece.start("den"), token.span[0] + piece.end()),
                    *divisor,
                    token,
                    None,
                    None,
                )
            )
        return found or None

    def list_marker(self, i: int) -> bool:
        """Token ``i`` numbers an item of a list: one to three digits that open their line, then ``.`` or ``)``, a
        space and more of the line (``3. **Transitivity**``, ``2) Next``)."""
        token, text = self.tokens[i], self.graph.text
        if not (self.raw(i).isdigit() and len(self.raw(i)) <= 3 and self.adjacent(i, i + 1)):
            return False
        if (
            self.text_of(i + 1) not in (".", ")")
            or not text[self.tokens[i + 1].span[1] : self.tokens[i + 1].span[1] + 1].isspace()
        ):
            return False
        before, after = token.span[0], self.tokens[i + 1].span[1]  # step over spaces only: linear in the text
        while before > 0 and text[before - 1] in " \t":
            before -= 1
        while after < len(text) and text[after] in " \t":
            after += 1
        opens_line = before == 0 or text[before - 1] == "\n"
        return opens_line and after < len(text) and text[after] not in "\r\n"  # not a line "5." alone

    def letter_formula_at(self, i: int) -> tuple[list[Quantity], int] | None:
        """A formula in letters written as plain text with no spaces that starts at token ``i`` (``x=30*(100/200)``,
        ``2x+5=15``): every number literal of it (``30``, ``100``, ``200``), as in a formula; ``None`` where the
        glued run is no such formula (see ``_LETTER_FORMULA_RE``)."""
        if self.adjacent(i - 1, i):
            return None
        end = i
        while end - i < 12 and self.adjacent(end, end + 1) and self.tokens[end + 1].kind == "word":
            end += 1
        start = self.tokens[i].span[0]
        written = self.graph.text[start : self.tokens[end].span[1]].rstrip(".?!;:")
        if not any(c.isdigit() for c in written):
            return None  # most words: no number in the run, so no formula to read
        label = re.match(r"[A-Za-z]{2,}:", written)  # "Total:x+(x/2)=930", "Rodney:2(4x-7)=8x-14"
        if label is not None:
            start, written = start + label.end(), written[label.end() :]
        letters = sum(c.isalpha() for c in written)
        if not (
            letters
            and _LETTER_FORMULA_RE.fullmatch(written)
            and _LETTER_FORMULA_OPERATORS & set(written)
            and ("=" in written or letters > 1 or re.search(r"\d[A-Za-z]|[xXyzn]", written))
            and not _NOT_A_LETTER_FORMULA_RE.search(written)
        ):
            return None
        found = []
        for piece in _LETTER_FORMULA_NUMBER_RE.finditer(written):
            numerator = (piece.start(), piece.end("number"), piece.group("number"))  # its sign and currency too
            if piece.group("den") is None:
                parts = [numerator]
            elif self.fraction_in_formula(written, piece):
                parts = [(piece.start(), piece.end(), piece.group("number") + "/" + piece.group("den"))]
            else:
                parts = [numerator, (piece.start("den"), piece.end("den"), piece.group("den"))]
            for first, last, number in parts:
                value, form = parse_number(number) or (None, None)
                if value is None:
                    return None
                value = -value if first == piece.start() and piece.group("sign") else value
                k = next(k for k in range(i, end + 1) if self.tokens[k].span[1] > start + first)
                span = (start + first, start + last)
                found.append(self.quantity(span, value, form, self.tokens[k], piece.group("currency"), None))
        return found, end + 1

    @staticmethod
    def fraction_in_formula(written: str, piece: re.Match) -> bool:
        """Whether ``a/b`` of a formula in letters is one fraction (``3/4*X``, ``(1/2)x``, ``70*4/7``), not a
        division of two numbers: its value is not whole, and it is in lowest terms unless it stands alone in
        brackets (``(100/200)``, a ratio of two quantities, is 100 and 200)."""
        numerator, denominator = piece.group("number"), int(piece.group("den"))
        if not numerator.isdigit() or not denominator or int(numerator) % denominator == 0:
            return False
        bracketed = written[piece.start() - 1 : piece.start()] == "(" and written[piece.end() : piece.end() + 1] == ")"
        return not bracketed or math.gcd(int(numerator), denominator) == 1

    def bracket_arithmetic_at(self, i: int) -> tuple[list[Quantity], int] | None:
        """A step of arithmetic with brackets written with no spaces over several tokens (``8+(8*2)=24``): each
        number apart; ``None`` where the glued run has no brackets or no ``=``, or holds a fraction."""
        end = self.glued_end(i)
        if self.letters_glued_before[i]:
            return None  # "(X+2)*(X+2+2)=80": a formula in letters, not arithmetic on numbers
        start = self.tokens[i].span[0]
        written = self.graph.text[start : self.tokens[end].span[1]]
        if "=" not in written or not ({"(", ")"} & set(written)) or not _BRACKET_ARITH_RE.fullmatch(written):
            return None
        found = []
        for piece in _ARITH_PIECE_RE.finditer(written):
            value = parse_number(piece.group("number"))
            if value is None or piece.group("den") is not None:
                return None
            k = next(k for k in range(i, end + 1) if self.tokens[k].span[1] > start + piece.start())
            span = (start + piece.start(), start + piece.end())
            found.append(self.quantity(span, *value, self.tokens[k], piece.group("currency"), None))
        return found, end + 1

    def read_glued(self, i: int, end: int) -> tuple[tuple[Fraction, str], int, bool, str | None, int] | None:
        """The longest run ``i..j`` (``j <= end``) that reads as a number, its sign, its currency sign, and how many
        characters at its end are not part of it (a sentence's full stop glued to the token)."""
        prefix = _PREFIX_RE.match(self.raw(i))
        comma = _DECIMAL_COMMA_RE.fullmatch(self.raw(i)[prefix.end() :])
        if comma is not None and (prefix.group(2) or self.decimal_comma(i)):
            whole, decimals = comma.group(1).replace(".", ""), comma.group(2)
            value = int(whole) + Fraction(int(decimals), 10 ** len(decimals))
            return (value, "decimal"), i, bool(prefix.group(1) or prefix.group(3)), prefix.group(2) or None, 0
        points = _POINT_THOUSANDS_RE.fullmatch(self.raw(i)[prefix.end() :])
        if points is not None and "€" in (prefix.group(2), self.text_of(i - 1), self.text_of(i + 1)):
            return (Fraction(int(points.group(0).replace(".", ""))), "integer"), i, bool(prefix.group(1)), None, 0
        spaced = self.spaced_end(i)
        if spaced is not None:  # "10 000", "1 000 000"
            written = self.graph.text[self.tokens[i].span[0] : self.tokens[spaced].span[1]]
            parsed = parse_number(written)
            if parsed is None and self.one_group_number(i, spaced):
                parsed = parse_number("".join(c for c in written if c not in _SPACES))  # "3 500 MB", "5 000"
            if parsed is not None:
                return parsed, spaced, False, None, 0
        for j in range(end, i - 1, -1):
            text = self.joined(i, j)
            prefix = _PREFIX_RE.match(text)
            body = text[prefix.end() :]
            trim = int(j == i and body.endswith(".") and parse_number(body) is None)  # "$280K." at a sentence end
            parsed = parse_number(body[: len(body) - trim])
            if parsed is not None:
                return parsed, j, bool(prefix.group(1) or prefix.group(3)), prefix.group(2) or None, trim
        return None

    def spaced_end(self, i: int) -> int | None:
        """The last token of a number written with thousands spaces at ``i`` (``10 000``), else ``None``."""
        j = i
        while (
            self.text_of(j + 1).isdigit()
            and len(self.text_of(j + 1)) == 3
            and self.tokens[j + 1].span[0] - self.tokens[j].span[1] == 1
            and self.graph.text[self.tokens[j].span[1]] in " \u00a0\u2009\u202f"
        ):
            j += 1
        if j == i or not self.text_of(i).isdigit() or self.adjacent(j, j + 1) and self.text_of(j + 1) in ("-", "/"):
            return None
        return j

    def decimal_comma(self, i: int) -> bool:
        """Token ``i`` (``15,50``, ``39,2``, ``1.299,50``: a comma and one or two decimals) is a number written with a
        decimal comma: a currency sign, a degree sign, a percent sign or a unit of measure follows it (``15,50 €``,
        ``39,2 °C``, ``3,5 kg``) or a currency sign is before it (``€ 1.299,50``), and it is no pair
        in brackets (``(1,5)``). English text groups thousands in threes, so ``15,500`` stays fifteen thousand five
        hundred; a bare ``1,5`` stays unread (a list or a pair)."""
        if self.text_of(i - 1) in ("(", "["):
            return False
        if self.text_of(i - 1) in _CURRENCY:
            return True
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        return after is not None and (
            after.label in _CURRENCY | _PERCENT | {"°", "ºc", "°c"} or _is_measure(after, _MEASURE_UNITS)
        )

    def code_run_end(self, i: int) -> int | None:
        """The last token of a code written in groups set apart by single spaces that holds token ``i``
        (``1Z 999 AA1 01 2345 6784``), else ``None``: four or more groups of capitals and digits, at least two
        with digits and one mixing letters and digits, so that no group of it is a count."""

        def group(k: int) -> bool:
            return 0 <= k < len(self.tokens) and bool(_CODE_GROUP_RE.fullmatch(self.raw(k)))

        def spaced(k: int) -> bool:  # tokens k and k + 1 are one space apart
            return 0 <= k and k + 1 < len(self.tokens) and self.tokens[k + 1].span[0] - self.tokens[k].span[1] == 1

        if not group(i):
            return None
        first, last = i, i
        while group(first - 1) and spaced(first - 1):
            first -= 1
        while group(last + 1) and spaced(last):
            last += 1
        groups = [self.raw(k) for k in range(first, last + 1)]
        with_digits = [g for g in groups if any(c.isdigit() for c in g)]
        mixed = any(any(c.isalpha() for c in g) for g in with_digits)
        return last if len(groups) >= 4 and len(with_digits) >= 2 and mixed else None

    def one_group_number(self, i: int, spaced: int) -> bool:
        """One digit and one group of three that are one number: the group starts with a zero (``5 000``: ``000``
        counts nothing), a currency sign is before it (``€ 3 500``) or a unit is after it (``3 500 MB``, ``5 000
        euros``); otherwise two numbers (``2 100 dollar bills``)."""
        if spaced != i + 1 or len(self.text_of(i)) != 1:
            return False
        return (
            self.text_of(i + 1).startswith("0")
            or self.text_of(i - 1) in _CURRENCY
            or self.text_of(spaced + 1).rstrip(".") in _GROUP_UNITS
        )

    def name_end(self, i: int) -> int | None:
        """The last token of a number that names a thing rather than counts, at ``i``, else ``None``: after a glued
        number sign (``Order #48213``); a letter after a hyphen (``4471-B``); a network's generation (``the 5G
        network``); a chain of digit groups joined by hyphens that is an ID or a date
        (``id_chain``: ``978-0-14-044913-6``, ``2024-03-11``; not ``3-4-5``, ``72-24-5-4 =``); a model name, a
        number or a hyphen pair after ``the`` or a possessive, alone or with capitalised words between, that a verb
        follows (``the 747-8 can carry``, ``the Pixel 8 were tested``, ``Samsung's Galaxy 9 is``; not ``the Celtics
        117-109 on``, ``the Catapult 2 times``)."""
        lettered = self.text_of(i + 1) == "-" and re.fullmatch(r"[A-Z]{1,2}", self.raw(i + 2))
        if lettered and self.adjacent(i, i + 1) and self.adjacent(i + 1, i + 2):
            return i + 2  # "Serial no. 4471-B": a part or serial number
        generation = self.raw(i + 1) == "G" and self.adjacent(i, i + 1) and self.raw(i) in ("2", "3", "4", "5", "6")
        if generation and i + 2 < len(self.tokens) and self.tokens[i + 2].upos == "NOUN":
            return i + 1  # "the 5G network": a generation of mobile networks
        last = i
        while (
            self.text_of(last + 1) == "-"
            and self.adjacent(last, last + 1)
            and self.adjacent(last + 1, last + 2)
            and self.raw(last + 2).isdigit()
        ):
            last += 2
        if self.text_of(i - 1) == "#" and self.adjacent(i - 1, i) or self.an_identifier_value(i, last):
            return last
        if last >= i + 4 and self.text_of(i - 1) in _NUMBERED_NOUNS | _IDENTIFIER_NOUNS:
            return last  # "Order 4471-8820-3 was dispatched": three groups after an order are its number
        groups = [self.raw(k) for k in range(i, last + 1, 2)]
        if not all(group.isdigit() for group in groups):
            return None
        if self.id_chain(groups, last):
            return last
        k = i - 1
        while k >= 0 and self.capitalised(k) and self.raw(k).isalpha() and self.tokens[k].upos in ("PROPN", "NOUN"):
            k -= 1
        if self.text_of(k) not in _NAME_DETERMINERS or (last == i and k == i - 1) or self.is_month(i - 1):
            return None
        after = self.tokens[last + 1] if last + 1 < len(self.tokens) else None
        if after is not None and not after.label[:1].isalpha() and after.label not in _CLAUSE_END:
            return None  # "the Frisbees 160 + 40": arithmetic
        if after is not None and after.upos in ("AUX", "VERB"):
            return last
        single_name = last == i and k < i - 1 and self.text_of(last + 1) not in _RANGE_WORDS
        return last if single_name and (after is None or after.upos == "CCONJ" or after.label in _CLAUSE_END) else None

    def an_identifier_value(self, i: int, last: int) -> bool:
        """The digits from ``i`` to ``last`` are the value of an identifier named just before them, with ``is``,
        ``was`` or a colon between or nothing (``the registration code is 5507-2219``, ``PIN: 4471``, ``your order
        number is 8812``, ``access code 0451``), and no word after them that they would count (not ``the code is 4
        digits long``, ``the password is 8 characters``, ``typed the code 3 times``)."""
        k = i - 1
        if self.text_of(k) in ("is", "was", ":", "="):
            k -= 1
        if self.text_of(k) == "." and self.text_of(k - 1) == "no":
            k -= 1  # "Cheque no. 118305": the tokenizer keeps the abbreviation's point apart
        noun = self.text_of(k)
        owner = k - 2 if self.text_of(k - 1) == "," else k - 1  # "my passport, number 533104927, expires"
        numbered = noun in ("number", "no.", "no", "#") and self.text_of(owner) in _NUMBERED_NOUNS
        if noun not in _IDENTIFIER_NOUNS and not numbered:
            return False
        after = self.tokens[last + 1] if last + 1 < len(self.tokens) else None
        return (
            after is None
            or after.label in _CLAUSE_END
            or after.upos in ("ADP", "CCONJ", "SCONJ", "PRON", "AUX", "VERB")
        )

    def id_chain(self, groups: list[str], last: int) -> bool:
        """Digit groups joined by hyphens that are an ID or a date, not a subtraction (``960-480-120 =``): no ``=``
        after them, and a group of two or more digits with a leading zero (``978-0-14-044913-6``, ``2024-03-11``),
        four or more groups of ten or more digits (``978-1-4028-9462-6``), or a year, a month and a day
        (``2024-12-25``)."""
        if len(groups) < 3 or self.text_of(last + 1)[:1] in ("=", "+", "-", "*", "×", "/"):
            return False  # "960-480-120 =", "20-10=184": arithmetic
        if any(len(group) > 1 and group[0] == "0" for group in groups):
            return True
        if len(groups) >= 4 and sum(map(len, groups)) >= 10:
            return True
        year, month, day = (int(g) for g in groups[:3]) if len(groups) == 3 else (0, 0, 0)
        return len(groups[0]) == 4 and 1000 <= year <= 2100 and 1 <= month <= 12 and 1 <= day <= 31

    def season_end(self, i: int) -> int | None:
        """The last token of a season or a span of years written ``2013-14`` at ``i``, else ``None``."""
        if not (_SEASON_RE.fullmatch(self.text_of(i)) and self.text_of(i + 1) in ("-", "–", "/")):
            return None
        second = self.text_of(i + 2)
        glued = self.adjacent(i, i + 1) and self.adjacent(i + 1, i + 2)
        return i + 2 if glued and second.isdigit() and len(second) == 2 else None

    def is_identifier(self, i: int) -> bool:
        """A catalogue number rather than a count: glued to letters and digits before it (``J1149.5+6663``) or
        starting with a zero and holding letters (``06F6``)."""
        text = self.raw(i)
        if text.isdigit() and text.startswith("00") and len(text) >= 4:
            return True  # "Cheque no. 000417": no count is written with two leading zeros (MATH's "0123456" is)
        if _POSTCODE_IN_RE.fullmatch(text) and _POSTCODE_OUT_RE.fullmatch(self.raw(i - 1)):
            return not self.adjacent(i - 1, i)  # "LS6 2QB", "K1A 0B1": a postcode
        if text[:1] == "0" and len(text) > 1 and text[1].isdigit() and any(c.isalpha() for c in text):
            return True
        k = i - 1
        while k >= 0 and self.adjacent(k, k + 1) and self.text_of(k) in ("+", "-", "−"):
            k -= 1
        if k == i - 1 or k < 0 or not self.adjacent(k, k + 1):
            return False
        before = self.raw(k)
        return any(c.isalpha() for c in before) and any(c.isdigit() for c in before)

    def glued_number(self, i: int) -> tuple[list[Quantity], int] | None:
        """A number glued to what follows it in one token (see ``_GLUED_RE``): ``4km^2`` (unit ``km^2``),
        ``8-``, ``3.5–4.0`` (two), ``2,000.45±0.01`` (two), ``2.48×10−5``; ``None`` for anything else."""
        arithmetic = self.arithmetic_at(i)
        if arithmetic is not None:
            return arithmetic, i + 1
        point = self.bracketed_tuple(i)
        if point is not None:
            return point, i + 1
        token = self.tokens[i]
        written = self.raw(i)
        if _UNIT_AND_FULL_STOP_RE.fullmatch(written):
            written = written[:-1]  # "Bake at 180C.", "It holds 2L.": the tokenizer kept the sentence's full stop
        vulgar = _VULGAR_HYPHEN_RE.fullmatch(written)
        if vulgar is not None and parse_number(vulgar.group(1)) is not None:  # "¾-inch cubes": ¾, unit inch
            span = (token.span[0], token.span[0] + vulgar.end(1))
            return [self.quantity(span, *parse_number(vulgar.group(1)), token, vulgar.group(2), None)], i + 1
        ordinal_fraction = _ORDINAL_FRACTION_RE.fullmatch(written)
        if ordinal_fraction is not None and int(ordinal_fraction.group(2)) > 0:  # "3/4ths of the votes"
            value = Fraction(int(ordinal_fraction.group(1)), int(ordinal_fraction.group(2)))
            return [self.quantity(token.span, value, "fraction", token, None, None)], i + 1
        pair = _DECIMAL_OVER_RE.fullmatch(written) or _UNIT_PAIR_RE.fullmatch(written)
        if pair is not None:  # "4.5/5 stars" (as "4.5 / 5" written apart), "180C/160C fan": two amounts
            units = (pair.group("u1"), pair.group("u2")) if "u1" in pair.re.groupindex else (None, None)
            return self.pieces(i, pair, ("n1", "n2"), units), i + 1
        feet = _FEET_INCHES_RE.fullmatch(written)
        if feet is not None:  # "6'2" (its inch sign a token apart), "5′10″": feet and inches
            return self.pieces(i, feet, (1, 2), ("ft", "in")), i + 1
        times = _TIMES_RE.fullmatch(written)
        if times is not None and not (times.group(2) == "10" and self.text_of(i + 1) in _MINUS):
            if parse_number(times.group(1)) is None or parse_number(times.group(2)) is None:
                return None
            return self.pieces(i, times, (1, 2), (None, None)), i + 1  # "8x2": 8 and 2, as "8 x 2" apart gives
        prefix = _PREFIX_RE.match(written)
        match = _GLUED_RE.fullmatch(written, prefix.end())
        if match is not None and match.group("unit") == "p" and self.pence(i, match.group("number")):
            parsed = parse_number(match.group("number"))
            return [self.quantity(token.span, parsed[0], parsed[1], token, "p", None)], i + 1  # "23p", "149.9p"
        if match is not None and (
            match.group("unit") in ("x", "X") or match.group("unit") in ("y", "z", "n") and self.in_arithmetic(i)
        ):
            # "2x more bandwidth", "3x the price": a multiplier; "x+x+x+3x = $240,000", "3X dollars", "2y + 1": a
            # coefficient, a number of the problem as the gold files count it
            parsed = parse_number(match.group("number"))
            span = (token.span[0] + match.start("number"), token.span[0] + match.end("number"))
            return [self.quantity(span, parsed[0], parsed[1], token, None, None)], i + 1
        seconds = match is not None and match.group("unit") == "s" and "." in match.group("number")  # "9.58s"
        currency_before = self.text_of(i - 1) if self.text_of(i - 1) in _CURRENCY and self.adjacent(i - 1, i) else None
        per_month = match is not None and match.group("unit") == "pm" and bool(prefix.group(2) or currency_before)
        if match is None or (match.group("unit") or "").rstrip("23^") in _NOT_UNITS and not (seconds or per_month):
            return None
        parsed = parse_number(match.group("number"))
        if parsed is None:
            return None
        value, form = parsed
        negative = bool(prefix.group(1) or prefix.group(3))
        start = token.span[0] + prefix.start(2) if prefix.group(2) else token.span[0] + match.start("number")
        unit = prefix.group(2) or match.group("unit")
        if per_month:
            unit = prefix.group(2) or currency_before  # "£9.99pm": money per month, not a clock time
        if match.group("unit") in ("tn", "trn") and (prefix.group(2) or currency_before):
            value, unit = value * 10**12, prefix.group(2) or currency_before  # "£1.2tn": money, so a trillion
        if match.group("ten") is not None:
            exponent, last = match.group("exp"), i
            if (
                exponent is None
                and self.text_of(i + 1) in _MINUS
                and self.adjacent(i, i + 1)
                and self.adjacent(i + 1, i + 2)
            ):
                exponent, last = self.text_of(i + 2), i + 2  # "2.48×10" "−" "5": the tokenizer split the exponent
            if exponent is None or not exponent.isdigit() or len(exponent) > 2:
                return None
            value *= Fraction(1, 10 ** int(exponent))
            end = self.tokens[last].span[1] if last > i else token.span[0] + match.end()
            return [self.quantity((start, end), -value if negative else value, "decimal", token, unit, None)], last + 1
        if match.group("percent") or match.group("percent_before"):
            value, form, unit = value / 100, "percent", "%"
        if match.group("dash") in ("–", "—") and self.year_range(i, value, parse_number(match.group("second"))):
            return [], i + 1  # "the war of 1914–1918": a span of years
        unit = match.group("money") or unit  # "175$." in one token: the sign after the amount
        if match.group("money_second") and currency_before and not prefix.group(2):  # "$10-$20": "$" a token apart
            start, unit = self.tokens[i - 1].span[0], currency_before
        sign_after = next(name for name in ("percent", "percent_before", "money", "number") if match.group(name))
        end = token.span[0] + match.end(sign_after)
        found = [self.quantity((start, end), -value if negative else value, form, token, unit, None)]
        second = parse_number(match.group("second")) if match.group("second") else None
        if second is not None and match.group("percent_before"):  # "4.25%-4.5%": the second sign is a token apart
            last = self.percent_end(i + 1) if self.adjacent(i, i + 1) else None
            end = self.tokens[last].span[1] if last is not None else token.span[0] + match.end("second")
            span = (token.span[0] + match.start("second"), end)
            found.append(self.quantity(span, second[0] / 100, "percent", token, "%", None))
            return found, (i if last is None else last) + 1
        percent = self.percent_end(i + 1) if second is not None and form != "percent" else None
        if percent is not None:  # "1.2–1.5%": the sign after the range is both ends'
            found = [self.quantity((start, end), (-value if negative else value) / 100, "percent", token, "%", None)]
            span = (token.span[0] + match.start("second"), self.tokens[percent].span[1])
            found.append(self.quantity(span, second[0] / 100, "percent", token, "%", None))
            return found, percent + 1
        scale = self.scale_word(i + 1) if second is not None and form != "percent" else None
        if scale is not None:  # "70–85 million lives": the scale word is both ends'
            found = [self.quantity((start, end), (-value if negative else value) * scale, form, token, unit, None)]
            span = (token.span[0] + match.start("second"), self.tokens[i + 1].span[1])
            found.append(self.quantity(span, second[0] * scale, second[1], token, unit, None))
            return found, i + 2
        if second is not None:  # "$10-$20": the second amount's own sign in the span
            opening = "money_second" if match.group("money_second") else "second"
            span = (token.span[0] + match.start(opening), token.span[0] + match.end("second"))
            found.append(self.quantity(span, second[0], second[1], token, match.group("money_second") or unit, None))
        return found, i + 1

    def bracketed_tuple(self, i: int) -> list[Quantity] | None:
        """Token ``i`` is numbers joined by commas with no space, right inside brackets: a point or a tuple written
        as plain text (``the distance between (-2,4) and (3,-8)``): each number, with its sign; else ``None`` (a
        decimal comma, ``2,5 kg``, is read elsewhere)."""
        written = self.raw(i)
        if not _TUPLE_RE.fullmatch(written):
            return None
        if not (
            self.text_of(i - 1) in ("(", "[")
            and self.adjacent(i - 1, i)
            and self.text_of(i + 1) in (")", "]")
            and self.adjacent(i, i + 1)
        ):
            return None
        token, found = self.tokens[i], []
        for piece in _TUPLE_NUMBER_RE.finditer(written):
            value, form = parse_number(piece.group(1))
            negative = piece.group().startswith("-")
            span = (token.span[0] + piece.start(), token.span[0] + piece.end())
            found.append(self.quantity(span, -value if negative else value, form, token, None, None))
        return found

    def pieces(self, i: int, match: re.Match, groups: tuple, units: tuple) -> list[Quantity]:
        """One quantity per group of ``match`` on token ``i``, with its unit (``6'2"``: 6 ``ft`` and 2 ``in``)."""
        token, found = self.tokens[i], []
        for group, unit in zip(groups, units):
            value, form = parse_number(match.group(group))
            span = (token.span[0] + match.start(group), token.span[0] + match.end(group))
            found.append(self.quantity(span, value, form, token, unit, None))
        return found

    def in_arithmetic(self, i: int) -> bool:
        """Token ``i`` stands beside an arithmetic sign or an equals sign (``2y + 1 = 7``)."""
        return self.text_of(i - 1) in _ARITHMETIC_SIGNS or self.text_of(i + 1) in _ARITHMETIC_SIGNS

    def million_counts(self, j: int) -> bool:
        """The ``m`` glued to an amount at ``j`` is a million: a plural noun that is no measure follows it (``2.1m
        visitors``), or another amount of the sentence is a million of such a noun (``2.1m visitors ... the 2.6m it
        drew``). ``2.5m wide``, ``a 3m wall`` stay metres."""

        def counts_noun(k: int) -> bool:
            token = self.tokens[k] if 0 <= k < len(self.tokens) else None
            counted = not _is_measure(token, _MEASURE_UNITS) if token else False  # "1.3m units" count; "2m feet" not
            return _plural(token) and token.upos == "NOUN" and counted and token.label not in _RACE_EVENTS

        def glued_m(k: int) -> bool:
            return self.raw(k) in ("m", "mn") and self.adjacent(k - 1, k) and bool(self.raw(k - 1)[-1:].isdigit())

        if not glued_m(j):
            return False
        return counts_noun(j + 1) or any(glued_m(k) and counts_noun(k + 1) for k in range(len(self.tokens)))

    def pence(self, i: int, number: str) -> bool:
        """``23p``, ``149.9p`` at ``i`` is an amount in pence: not a video resolution (``1080p``) and no term of
        arithmetic (``2p + 3q = 12``, where ``p`` is a variable)."""
        parsed = parse_number(number)
        if parsed is None or parsed[0] in _RESOLUTIONS:
            return False
        if self.text_of(i - 1) in _RANGE_WORDS and self.text_of(i - 2) in _CLOCK_WORDS:
            return False  # "open 4 pm to 10p": p.m., a clock time
        return self.text_of(i - 1) not in _ARITHMETIC_SIGNS and self.text_of(i + 1) not in _ARITHMETIC_SIGNS

    def notation_after(self, value: Fraction, form: str, last: int) -> tuple[Fraction, int]:
        """``3 x 10^8``: a power of ten after a multiplication sign scales the number."""
        if form == "fraction" or self.text_of(last + 1) not in _MULTIPLY:
            return value, last
        end = self.glued_end(last + 2)
        for j in range(end, last + 1, -1):
            text = self.joined(last + 2, j)
            text = text[:-1] if j == end and text.endswith(".") else text  # "× 10²³." ends the sentence
            if _POWER_OF_TEN_RE.fullmatch(text):
                power = parse_number(text)
                return (value * power[0], j) if power is not None else (value, last)
        return value, last

    def percent_end(self, j: int) -> int | None:
        """The last token of a percent sign or word at ``j``: ``%``, ``percent``, ``per cent`` (two tokens)."""
        if self.text_of(j) in _PERCENT:
            return j
        return j + 1 if self.text_of(j) == "per" and self.text_of(j + 1) == "cent" else None

    def digit_fraction_after(self, first: int, last: int) -> tuple[Fraction, int] | None:
        """``and 1/2`` after a whole number ending at ``last``, before a measure or a plural noun: ``3 and 1/2
        pounds`` is 7/2 pounds; ``the product of 3 and 1/2`` and ``between 3 and 1/2 cup`` stay two numbers."""
        if self.text_of(last + 1) != "and" or self.text_of(first - 1) in ("between", "of", "and", ","):
            return None
        proper = re.fullmatch(r"(\d)/(\d{1,2})", self.text_of(last + 2))
        if proper is None or not 0 < int(proper.group(1)) < int(proper.group(2)):
            return None
        after = self.tokens[last + 3] if last + 3 < len(self.tokens) else None
        if after is None or not (_is_measure(after) or _plural(after) and after.upos == "NOUN"):
            return None
        return Fraction(int(proper.group(1)), int(proper.group(2))), last + 2

    def fraction_after(self, j: int) -> tuple[Fraction, int] | None:
        """``and a half``, ``and one-half``, ``and three quarters`` at ``j``: the fraction and its last token."""
        if self.text_of(j) != "and":
            return None
        word, k = self.text_of(j + 1), j + 2
        if word == "one" and self.text_of(k) == "-":
            k += 1
        if word in _ARTICLES or word == "one":
            denominator = _SINGULAR_DENOMINATORS.get(self.text_of(k))
            return (Fraction(1, denominator), k) if denominator else None
        denominator = ORDINAL_DENOMINATORS.get(self.text_of(k))
        count = UNIT_WORDS.get(word)
        if denominator and count and count < denominator:
            return Fraction(count, denominator), k
        return None

    def ratio_at(self, i: int) -> tuple[list[Quantity], int]:
        """``3:2`` -> 3 and 2 (unit ``ratio``); ``3:30`` and ``7:30 p.m.`` are clock times, not quantities."""
        token, parts = self.tokens[i], self.text_of(i).split(":")
        clock = len(parts) == 2 and len(parts[1]) == 2 and len(parts[0]) <= 2 and parts[0].isdigit()
        clock = clock and int(parts[0]) <= 24
        clock = clock and int(parts[1]) < 60 and not self.words & _RATIO_CUES and self.text_of(i + 1) != "scale"
        if clock or self.text_of(i + 1) in _CLOCK_WORDS or self.raw(i) != self.text_of(i):
            return [], i + 1
        quantities, start = [], token.span[0]
        for part in parts:
            parsed = parse_number(part)
            if parsed is None:
                return [], i + 1
            quantities.append(self.quantity((start, start + len(part)), parsed[0], parsed[1], token, "ratio", None))
            start += len(part) + 1
        return quantities, i + 1

    def phone_end(self, i: int, end: int) -> int | None:
        """The last token of a phone number at ``i``: ``555-123-4567``, ``(800) 555-0199``, ``call 555-1234``."""
        if (
            _AREA_CODE_RE.fullmatch(self.text_of(i))
            and self.text_of(i - 1) == "("
            and self.text_of(i + 1) == ")"
            and self.phone_end(i + 2, self.glued_end(i + 2)) is not None
        ):
            return self.phone_end(i + 2, self.glued_end(i + 2))
        area_code = self.text_of(i - 1) == ")" and _AREA_CODE_RE.fullmatch(self.text_of(i - 2)) is not None
        for j in range(end, i, -1):
            text = self.joined(i, j)
            if _PHONE_RE.fullmatch(text) and (text.count("-") >= 2 or area_code or self.words & _PHONE_CUES):
                return j
        return None

    def spaced_phone_end(self, i: int) -> int | None:
        """The last token of a phone number written in groups of digits set apart by spaces at ``i``: ``0345 600
        7890`` (a leading zero), ``+44 20 7946 0958`` (a country code), ``555 123 4567`` (three groups, nine to
        thirteen digits, not thousands groups), ``call 555 1234``; ``None`` for ``1 024``, ``8 120 000``."""
        groups, j = [self.raw(i)], i
        while self.raw(j + 1).isdigit() and self.tokens[j + 1].span[0] - self.tokens[j].span[1] == 1:
            j += 1
            groups.append(self.raw(j))
        if len(groups) < 2 or not groups[0].isdigit():
            return None
        digits = sum(len(group) for group in groups)
        thousands = 1 <= len(groups[0]) <= 3 and all(len(group) == 3 for group in groups[1:])
        if thousands or not 7 <= digits <= 13:
            return None
        country = not self.adjacent(i - 1, i) and re.fullmatch(r"\+\d{1,3}", self.raw(i - 1)) is not None
        if country or groups[0][:1] == "0" and len(groups[0]) >= 3 or self.words & _PHONE_CUES:
            return j
        return j if len(groups) >= 3 and digits >= 9 and len({len(group) for group in groups}) > 1 else None

    def not_a_quantity(self, i: int, last: int, value: Fraction, form: str) -> bool:
        """A date, a year, a clock time or a label rather than a count."""
        if form == "fraction" and last == i:
            date = _MONTH_DAY_RE.fullmatch(self.text_of(i))  # "on 12/25"
            return bool(
                date
                and 1 <= int(date.group(1)) <= 12
                and 1 <= int(date.group(2)) <= 31
                and self.text_of(i - 1) in _DATE_CUES
                and self.text_of(i + 1) != "of"
            )
        clock = re.fullmatch(r"(\d{1,2})\.([0-5]\d)", self.text_of(i))
        if clock and last == i and 1 <= int(clock.group(1)) <= 12 and self.text_of(i + 1) in _CLOCK_WORDS:
            return True  # "2.13 am"
        if clock and last == i and self.raw(i) == self.text_of(i) and self.clock_with_a_point(i, int(clock.group(1))):
            return True  # "ring after 8.30 on weekdays"
        before = (
            self.text_of(i - 2) if self.text_of(i - 1) == "." and self.adjacent(i - 2, i - 1) else self.text_of(i - 1)
        )
        if before in _EXTENSION_WORDS and last == i:
            return True  # "extension 204": a phone extension
        if form == "decimal" and last == i and re.fullmatch(r"\d+\.\d+", self.raw(i)) and self.is_label(i):
            return True  # "Python 3.12", "Room 3.14": a version or a room named by a decimal after a name
        if form != "integer" or last != i or "," in self.text_of(i):
            return False
        decade = len(self.raw(i)) in (2, 4) and self.raw(i).endswith("0") and self.raw(i + 1) in ("'s", "’s")
        if decade and self.adjacent(i, i + 1) and self.text_of(i - 1) in ("the", "early", "mid", "late"):
            return True  # "the 1990's", "the 80's": a decade, as "the 1960s" is
        apostrophe = self.text_of(i - 1) in ("'", "’") and self.adjacent(i - 1, i) and not self.adjacent(i - 2, i - 1)
        quoted = self.last_quote > i  # "'12 apples'"
        if apostrophe and len(self.raw(i)) == 2 and not quoted:
            return True  # "the class of '98", "back in ’05": a year
        if self.text_of(i - 1) in ("number", "no.") and self.text_of(i - 2) in _KIND_DETERMINERS:
            after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
            if (
                after is not None
                and after.upos == "NOUN"
                and after.label not in _COUNT_AFTER
                and not _is_measure(after)
            ):
                return True  # "the number 38 bus": the number names the bus (not "the number 7 is prime")
        if self.names_a_thing(i, value):
            return True  # "the 73 bus", "The Apollo 11 crew", "Schalke 04"
        if 1 <= value <= 31 and (self.is_month(i - 1) or self.is_month(i + 1)):
            return True  # "May 4", "1 May"
        if 1 <= value <= 12 and (self.text_of(i + 1) in _CLOCK_WORDS or self.time_of_day_after(i)):
            return True  # "9 a.m.", "8 in the morning"
        if 1 <= value <= 12 and self.hours_from_till(i):
            return True  # "slept from 11 till 5"
        return self.is_year(i, value) or self.is_label(i)

    def names_a_thing(self, i: int, value: Fraction) -> bool:
        """The whole number at ``i`` names a thing: a route before its vehicle (``the 73 bus``, ``the 2 train``; a
        count would make the noun plural), a name's number before a singular noun (``The Apollo 11 crew``, ``the
        Boeing 747 jet``), or a number written with a leading zero after a capitalised word (``Schalke 04``,
        ``Agent 007``)."""
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        singular_after = after is not None and after.upos == "NOUN" and not _plural(after)
        if value != 1 and singular_after and after.label in _ROUTE_NOUNS and self.text_of(i - 1) in _KIND_DETERMINERS:
            head, _ = self.reader.parent(after.id)
            _, head_relation = self.reader.parent(head.id) if head is not None else (None, "")
            if head is None or head.upos != "NOUN" or head.span[0] < after.span[0] or head_relation == "root":
                return True  # not "the 3 bus drivers" (a count of drivers); "The 73 bus runs", "runs" taken for a noun
        if (
            value != 1
            and singular_after
            and not _is_measure(after)
            and self.text_of(i - 2) in _NAME_DETERMINERS
            and self.capitalised(i - 1)
            and self.tokens[i - 1].upos == "PROPN"
            and not self.is_month(i - 1)
        ):
            return True
        if singular_after and after.label in _STATUS_NOUNS and self.text_of(i - 1) in _KIND_DETERMINERS:
            return True  # "a 503 error", "the 404 status"
        written = self.raw(i)
        return len(written) > 1 and written[0] == "0" and written.isdigit() and i > 0 and self.capitalised(i - 1)

    def is_month(self, i: int) -> bool:
        return self.text_of(i).rstrip(".") in MONTHS and self.capitalised(i)

    def is_year(self, i: int, value: Fraction) -> bool:
        """``in 2019``, ``May 1995``, ``May 4, 1901``, the 2005 of ``between 2000 and 2005``: a year, not a count."""
        if not 1000 <= value <= 2100:
            return False
        before = self.text_of(i - 1)
        if before.rstrip(".") in MONTHS or before.rstrip(",").isdigit():
            return True
        if before in _RANGE_WORDS | {","} and (i - 2 in self.dates or self.is_month(i - 2)):
            return True
        if before == "for" and self.text_of(i + 1) in _CLAUSE_END:
            # "a deficit of (€ 820,000) for 2024."; not a price: "she sold it for 1500."
            return 1900 <= value <= 2100 and not any((t.lemma or "").lower() in _EXCHANGE_VERBS for t in self.tokens)
        if _QUARTER_RE.fullmatch(before) or before == "-" and self.text_of(i - 2) == "mid" and self.adjacent(i - 1, i):
            return True  # "Q3 2024", "mid-2023"
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        following = self.tokens[i + 2] if i + 2 < len(self.tokens) else None
        plural_after = _plural(following)
        head_adjective = after is not None and after.upos == "ADJ" and not plural_after  # "the 2026 final go on sale"
        # "a 2022 study" as "the 2026 final"; not a round count ("a 2000 piece puzzle")
        determiner = before == "the" or before in _ARTICLES and value % 100 != 0
        # an older year after "the" only where it is no round number: "the 1883 eruption" (not "the 1500 piece set")
        dated = 1900 <= value <= 2100 or before == "the" and value % 100 != 0
        named_event = after is not None and after.upos == "PROPN" and 1900 <= value <= 2100  # "the 2023 Tokyo Marathon"
        if determiner and dated and after is not None and (after.upos == "NOUN" or head_adjective or named_event):
            if not _plural(after) and not _is_measure(after) and self.text_of(i + 2) not in ("-", "–"):
                return True  # "the 2026 final", "the 2000 census" (not "the 2000 runners", "the 1500 metre race")
        if before not in _YEAR_CUES:
            return False
        parent, relation = self.reader.parent(self.tokens[i].id)
        counts = relation == "dep:nummod" and parent is not None and parent.upos == "NOUN"
        return not (counts and parent.span[0] > self.tokens[i].span[0])  # "in 2024 dollars" counts dollars

    def year_range(self, i: int, first: Fraction, second: tuple[Fraction, str] | None) -> bool:
        """Token ``i`` is a span of years written in one token, ``1914–1918`` after a word that names a year (``of``,
        ``from``, ``during``), not a range of counts (``from 1500–2000 people``)."""
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        return (
            second is not None
            and all(v.denominator == 1 and 1000 <= v <= 2100 for v in (first, second[0]))
            and first < second[0]
            and self.text_of(i - 1) in _YEAR_CUES
            and (after is None or after.upos not in ("NOUN", "PROPN"))
        )

    def is_label(self, i: int) -> bool:
        """``Route 66``, ``Level 5``, ``42 Oak Street``: the number names rather than counts (not ``Griffin 3 less
        than``: a comparison after the number makes it a count)."""
        if self.adjacent(i, i + 1) and self.text_of(i + 1) in ("*", "×", "÷", "+") and self.raw(i + 2)[:1].isdigit():
            return False  # "take Alice 25*60= 1500 minutes": a step of arithmetic after a name, not "Voyager 2"
        closing_quote = self.text_of(i + 1) == '"' and sum(self.text_of(k) == '"' for k in range(i)) % 2 == 1
        if self.text_of(i + 1) in _COUNT_AFTER and not closing_quote:  # 'Wrench 8"', not '"English 101"'
            return False
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        # "Round 3 was tough", "Order 66 was given": a name, then its verb; not "Buy 2 get the 3rd half price"
        named = after is not None and (
            after.upos == "AUX" or after.upos == "VERB" and after.label not in _COMMAND_VERBS
        )
        if i == 1 and self.text_of(0) in _COMMAND_VERBS and not named:
            return False  # "Order 3 items", "Buy 2, get 1 free": a command opening the sentence, then its count
        before = self.tokens[i - 1] if i > 0 else None
        if self.raw(i - 1) in _CURRENCY_CODES or self.raw(i - 1) == "Mach":
            return False  # "CHF 480": an amount; "Mach 0.85": a speed
        if self.text_of(i + 1) in ("-", "–") and self.adjacent(i, i + 1) and self.text_of(i + 2).isdigit():
            return False  # "outscored Boston 31-18": a score after a name
        if self.after_a_label_abbreviation(i) or before is not None and self.names_one_of(i):
            return True
        parent, _ = self.reader.parent(self.tokens[i].id)
        if self.capitalised(i + 1) and any(self.text_of(k).rstrip(".") in _STREET_WORDS for k in (i + 2, i + 3)):
            return True
        if self.capitalised(i + 1) and self.postcode_after(i):
            return True  # "212 Canal Side, Leeds LS11 5PS": a house number, its street named by no street word
        if before is not None and _CAMEL_RE.fullmatch(self.raw(i - 1)) and self.raw(i - 1) != "pH":
            return True  # "iPhone 12" (not "pH 6.5", a measure)
        if (
            before is not None
            and before.upos == "PROPN"
            and self.capitalised(i - 1)
            and self.capitalised(i + 1)
            and self.tokens[i + 1].upos in ("PROPN", "NOUN")
        ):
            return True  # "South 32 Ltd", "Bahco 9031 Ergo": a name around the number
        return (
            before is not None
            and parent is not None
            and parent.id == before.id
            and before.upos in ("NOUN", "PROPN")
            and self.graph.text[before.span[0]].isupper()
            and not (after is not None and _is_measure(after))  # "Toast 50g of almonds": a measure, not "Voyager 2"
        )

    def after_a_label_abbreviation(self, i: int) -> bool:
        """Token ``i`` follows ``No.``, ``Op.``, ``Vol.`` (``_LABEL_ABBREVIATIONS``) in the text, however the parser
        cut it: ``He played Op. 9`` may end a sentence at ``Op.``."""
        start = self.tokens[i].span[0]
        return _LABEL_ABBREVIATION_RE.search(self.graph.text, max(0, start - 8), start) is not None

    def postcode_after(self, i: int, window: int = 8) -> bool:
        """Token ``i`` opens an address: capitalised words, a comma, then a British or Canadian postcode
        (``LS11 5PS``) within ``window`` tokens."""
        k = i + 1
        while k < len(self.tokens) and k <= i + 3 and self.capitalised(k):
            k += 1  # the street's name, capitalised, then a comma: "212 Canal Side, Leeds LS11 5PS"
        return self.text_of(k) == "," and any(
            _POSTCODE_OUT_RE.fullmatch(self.raw(j)) and _POSTCODE_IN_RE.fullmatch(self.raw(j + 1))
            for j in range(k + 1, min(k + 1 + window, len(self.tokens) - 1))
        )

    def names_one_of(self, i: int) -> bool:
        """``gate 12``, ``Channel 4``, ``Year 9 pupils``, ``in section 3``, both of ``junctions 19 and 20``: a number
        right after a noun of ``_LABEL_NOUNS`` (or after its plural, with a second number) names one of them, unless a
        determiner or a number is before the noun or a measure follows the number (``each year 500 people``, ``a room
        12 feet wide``, ``3 flights 2 hours apart``)."""
        if self.after_a_label_abbreviation(i):
            return True  # "Nocturne No. 2", "Op. 9"
        if self.text_of(i - 2) == "flight" and re.fullmatch(r"[A-Z][A-Z0-9]", self.raw(i - 1)):
            return True  # "Flight BA 283": an airline's code, then the flight's number
        noun = self.text_of(i - 1).rstrip(".")
        if noun in _RANGE_WORDS | {","} and _STARTS_LIKE_NUMBER_RE.match(self.text_of(i - 2)):
            return self.text_of(i - 3).endswith("s") and self.names_one_of(i - 2)  # the 20 of "junctions 19 and 20"
        plural_pair = noun.endswith("s") and noun[:-1] in _LABEL_NOUNS and self.text_of(i + 1) in _RANGE_WORDS | {","}
        if self.label_noun_is_a_verb(i):
            return False  # "can grade 296 papers", "each row seats 7 or 8 people": the number counts the papers
        loose = noun in _LOOSE_LABEL_NOUNS
        if (
            noun not in _LABEL_NOUNS
            and not plural_pair
            and not loose
            or self.text_of(i - 2) in _KIND_DETERMINERS | {"per"}
            or self.tokens[i - 2].upos == "ADJ"
            and self.text_of(i - 3) in _KIND_DETERMINERS
        ):
            return False  # "each year 500 people visit", "a room 12 feet wide", "in a low season 4 packs": counted over
        if _STARTS_LIKE_NUMBER_RE.match(self.text_of(i - 2)) or self.text_of(i + 1) in ("by", "x", "×"):
            return False
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        # A label capitalised inside a sentence is a name whatever follows ("the ferry from Jetty 2 leaves at 6",
        # where the tagger reads "leaves" as a noun).
        opening = self.text_of(i - 2) in ("", ".", "!", "?", ":", "\n")
        named = self.capitalised(i - 1) and (not opening or noun in _NOUN_ONLY_LABELS)
        if (
            loose
            and not named
            and after is not None
            and (after.upos in ("NOUN", "PROPN", "NUM", "ADJ", "VERB") or self.text_of(i + 1) in _PERCENT)
        ):
            return False  # "at the first stop 8 people got off", "stop 2 raised beds": the number counts what follows
        return after is None or not _is_measure(after)

    def label_noun_is_a_verb(self, i: int) -> bool:
        """The word before the number at ``i`` is a verb that has the number's noun for object: lower case, a
        counted noun after the number (or after the pair it opens: ``seats 7 or 8 people``), and before it an
        auxiliary, a noun or a pronoun that can be its subject (``can grade 296 papers``, ``the row seats 7``; not
        ``his grade 5 students``, ``in grade 5 classes``, ``the Year 9 pupils``). The tagger alone cannot tell:
        it takes ``gate`` in ``Go to gate 12`` for a verb."""
        if not self.raw(i - 1)[:1].islower():
            return False
        after = (
            i + 3
            if self.text_of(i + 1) in _RANGE_WORDS and _STARTS_LIKE_NUMBER_RE.match(self.text_of(i + 2))
            else i + 1
        )
        if after >= len(self.tokens) or self.tokens[after].upos != "NOUN":
            return False
        subject = self.tokens[i - 2] if i >= 2 else None
        return subject is not None and (
            subject.upos in ("AUX", "NOUN", "PROPN")
            or subject.upos == "PRON"
            and self.text_of(i - 2) not in _POSSESSIVES
        )

    # ------------------------------------------------------------------ number words
    def words_at(self, i: int) -> tuple[list[Quantity], int] | None:
        word = self.text_of(i)
        article = self.text_of(i - 1) in _ARTICLES
        if word in _SIGN_WORDS or word == "point":
            return self.signed_at(i) if word in _SIGN_WORDS else self.point_at(i)
        if word == "couple" and article and self.text_of(i + 1) == "of":
            return [self.make(i, i, Fraction(2), "word")], i + 1  # "a couple of tickets"
        if word == "once" and (self.once_counted(i) or self.once_after_its_verb(i)):
            return [self.make(i, i, Fraction(1), "word")], i + 1  # "used more than once": a count, as "twice" is
        if word.endswith("fold") and word[: -len("fold")] in _FOLD_VALUES:
            return [self.make(i, i, Fraction(_FOLD_VALUES[word[: -len("fold")]]), "word")], i + 1  # "grew tenfold"
        if self.text_of(i - 1) == "year" and self.text_of(i - 2) == "the" and word in _NUMBER_WORDS:
            run = self.word_run(i)
            return [], run[1] + 1  # "in the year two thousand": a year
        # "for an hour, hour and a half": speech drops the article of a second, corrected span of time
        restated = word in ("hour", "minute", "day", "week") and self.text_of(i - 1) in (",", "or")
        measure_and = (article or restated or self.text_of(i - 1) == "another") and self.text_of(i + 1) == "and"
        if word not in _NUMBER_WORDS and not measure_and:
            return None  # most words: no number word, and not "an hour and a half", "another hour and a quarter"
        if self.in_a_title(i):
            return None  # "Orwell's Nineteen Eighty-Four", "the Fantastic Four": a name
        if word == "half" and self.text_of(i - 1) in ("first", "second") and self.half_of_nothing(i):
            return None  # "the second half was livelier": a part of a game or a show, not half of something named
        if self.in_an_idiom(i):
            return None  # "in two minds", "one of a kind", "on cloud nine"
        opens_clause = i == 0 or self.text_of(i - 1) in (",", "and", "but", "then", "when", "until")
        if word == "one" and opens_clause and self.text_of(i + 1) in _SOME_TIMES and self.tokens[i + 2 : i + 3]:
            if self.someday(i + 2):
                return None  # "and one night we dug forty-two cars out": some night, not a count
        if word == "one" and i == 0 and self.text_of(1) == "day" and self.tokens[2:3] and self.someday(2):
            return None  # "One day I'd like to...", "One day, a farmer...": some day, not a count of days
        if word in _CLOCK_PARTS and self.text_of(i + 1) in ("past", "to") and self.clock_hour(i + 2):
            return [], i + 3  # "half past seven", "a quarter to 5": a time of day
        oven = self.oven_setting(i)
        if oven is not None:
            return [self.make(i, oven[0], oven[1], "word")], oven[0] + 1  # "Bake it at two-twenty": 220 degrees
        if self.clock_hour(i) and self.text_of(i + 1) in _CLOCK_WORDS:
            return [], i + 2  # "six o'clock", "seven pm": a time of day, as "7 o'clock" is
        clock_end = self.clock_in_words(i)
        if clock_end is not None:
            return [], clock_end + 1  # "six minutes past seven", "at half six", "struck eleven": a time of day
        token = self.tokens[i]
        if self.inside_hyphenated_word(i):
            return None  # "non-zero", "half-life"
        opens = i == 0 or self.text_of(i - 1) in (",", '"', "“", "'")  # not "in less than one second, using"
        if (
            word == "one"
            and opens
            and self.text_of(i + 1) in _WAIT_WORDS
            and self.text_of(i + 2) in ("please", "!", ",")
        ):
            return None  # "One moment please!"
        if word == "zero" and self.text_of(i - 1) in ("below", "above"):
            return None  # "How far below zero is each?": a reference point
        if word == "one" and self.one_and_the_other(i):
            return None  # "4:7 in one class and 9:2 in the other": one of two, not a count
        if word in UNIT_WORDS or word in TENS_WORDS:
            year_end = self.spoken_year_end(i)
            if year_end is None:
                year_end = self.thousands_year_end(i)
            if year_end is not None:
                return [], year_end + 1  # "in nineteen eighty-four", "in two thousand and eight": a year in words
            end = self.word_run(i)[1]
            one_word = end == i or end == i + 2 and self.text_of(i + 1) == "-"  # "six", "forty-seven"
            if self.text_of(i - 1) in _ANY_LABEL_NOUNS and one_word and self.names_one_of(i):
                return [], end + 1  # "from platform six", "from stop three in", "Lot forty-seven,": one named
            if word == "one" and self.pronoun_one(i):
                return None  # "the red one", "that one costs", "one at a time": a pronoun, not a count
            return self.number_words_at(i)
        if word in _HUNDRED_AND_SCALES and (article or not self.vague_scale(i)):
            return self.number_words_at(i)  # "a hundred", "a million", "thousand", "hundred and twelve"
        fraction_word = word in ORDINAL_DENOMINATORS  # "between a third and a half": two fractions
        one_more = self.text_of(i - 1) == "another"  # "then another quarter cup", "another hour and a quarter"
        if (article or one_more or restated) and word.isalpha() and not fraction_word and self.fraction_after(i + 1):
            return self.and_a_half_at(i)  # "an hour and a half"
        if word in ORDINAL_DENOMINATORS and (article or one_more) and word not in ("half", "halves", "quarters"):
            if word in ORDINAL_WORDS and self.ordinal_before_noun(i):
                return None  # "a third set", "a fifth grader": a rank
            if word == "quarter" and self.a_coin(i):
                return None  # "change for a quarter using U.S. coins": the coin, not 1/4
            return [self.make(i, i, Fraction(1, ORDINAL_DENOMINATORS[word]), "word")], i + 1  # "a third of"
        if word in _YEARS_WORDS:  # "a decade from now" is 10 years; "the decade", "two decades" are not read here
            if not article or self.compared_over(i) or self.rate_period(i):
                return None
            if self.text_of(i - 2) in _HEDGES_BEFORE_A_PERIOD:
                return None  # "for over a century", "a quarter of a century": no number of years
            return [self.make(i, i, Fraction(_YEARS_WORDS[word]), "word", "years")], i + 1
        if word == "half" and self.text_of(i + 1) in _ARTICLES:
            scale = self.scale_of(i + 2)
            if scale is not None:  # "half a dozen", "half a million"
                return [self.make(i, i + 2, Fraction(scale, 2), "word")], i + 3
        if word == "half" and self.text_of(i + 1 + (self.text_of(i + 1) == "-")) == "time":
            if self.text_of(i - 1) in ("at", "by", "after", "before", "until", "the"):
                return None  # "nil-nil at half time", "the half-time score": the break in a match
        if word == "dozen":
            return ([self.make(i, i, Fraction(12), "word")], i + 1) if article else None  # not "how many dozen"
        single = _SINGLE_WORDS.get(word)
        if single is None:
            return None
        if word == "quarter" and not article:
            return None  # "the third quarter", "a quarter" is 1/4
        if word == "double" and token.upos == "VERB":
            return None
        if word in _KIND_WORDS and self.names_a_kind(i):
            return None  # "an ordered triple", "the double cone": a kind of thing, not a multiple
        return [self.make(i, i, single, "word")], i + 1

    def in_a_title(self, i: int) -> bool:
        """The number word at ``i`` is written in title case inside its sentence, beside another word of a name
        (``Orwell's Nineteen Eighty-Four``, ``the Big Four``): a name's word. Not at the sentence's start or after a
        quote or a colon (``"Two``)."""
        written = self.raw(i)
        if not (i > 0 and written[:1].isupper() and written[1:].islower()):
            return False
        if self.text_of(i - 1) in _OPENERS or i == 1 and not any(c.isalnum() for c in self.raw(0)):  # "- Two"
            return False
        before = i - 2 if self.text_of(i - 1) in ("-", "–") and self.adjacent(i - 2, i - 1) else i - 1

        def title_word(k: int) -> bool:
            written = self.raw(k)
            return len(written) > 1 and written.isalpha() and written[0].isupper() and written[1:].islower()

        # another word of the name beside it: not "...the letter A. Half of what was left", a sentence the splitter
        # did not cut
        named = title_word(before) or self.text_of(i - 1) == "'s" or title_word(i + 1)
        return named and not self.a_written_amount(i)

    def a_written_amount(self, i: int) -> bool:
        """Number words in title case from ``i`` on that a money word ends (``Eight Hundred and Forty Pounds
        Only``, ``and Fifty Cents``): an amount written out, as a cheque writes it, not a name."""
        k, end = i, min(len(self.tokens), i + _LONGEST_WRITTEN_AMOUNT)  # bounded: a run of such words stays linear
        while k < end and (self.text_of(k) in _NUMBER_WORDS or self.text_of(k) in ("and", "-")):
            k += 1
        return k > i and self.text_of(k) in _MONEY_WORDS

    def half_of_nothing(self, i: int) -> bool:
        """``the first half``/``the second half`` at ``i`` halves nothing the problem names: no ``of`` after it and no
        other ``half`` in the problem (``during the first half of the trip ... the second half`` halves the trip, and
        so does ``... the first half of the hill. How long did he take to run the second half?``)."""
        return self.text_of(i + 1) != "of" and len(re.findall(r"\bhalf\b", self.graph.text, re.IGNORECASE)) == 1

    def someday(self, j: int) -> bool:
        """After a sentence-opening ``One day`` (``j``: the token after it) comes its clause (``I'd like``,
        ``, a farmer``, ``Tom sold``), not what the day counts (``One day has 24 hours``)."""
        token = self.tokens[j]
        return token.label == "," or token.upos in ("PRON", "PROPN") or token.label in ("the", "a", "an")

    def clock_with_a_point(self, i: int, hour: int) -> bool:
        """``after 8.30``, ``at 7.45``, ``until 5.00``: a time of day written with a point (British style) after a word of
        time, with nothing counted after it. Only the quarter hours are read so, since ``sold at 1.25`` is a price;
        after a verb of a timetable any minute is (``flight lands 6.40 at gate 23``), and before a departure (``miss
        the 8.15 connection``, ``the 8.15 to Paddington``); after a day of the week the quarter hours are (``book
        club's on Thurs, 7.30,``); and any minute where the hour closes a clause after ``at`` (``due at 7.40, so``)."""
        to_a_place = self.text_of(i + 1) in ("to", "from") and self.raw(i + 2)[:1].isupper()
        if self.text_of(i - 1) == "the" and (self.text_of(i + 1) in _DEPARTURES or to_a_place):
            return hour <= 23  # "the 6.40 bus", "the 8.15 to Paddington": a departure named by its time
        if hour <= 12 and self.hour_closing_a_clause(i):
            return True  # "now due at 7.40, so", "I'll grab u at 8.10, leave": any minute
        if (
            hour > 23
            or self.text_of(i)[-2:] not in ("00", "15", "30", "45")
            and self.text_of(i - 1) not in _TIMETABLE_VERBS
        ):
            return False
        timetable = self.text_of(i - 1) in _TIMETABLE_VERBS  # "flight lands 6.40": any minute
        after_a_day = self.weekday(i - 1) or self.text_of(i - 1) == "," and self.weekday(i - 2)  # "on Thurs, 7.30"
        if self.text_of(i - 1) not in ("at", "after", "before", "until", "till", "from") and not (
            timetable or after_a_day
        ):
            return False
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        counted = after is not None and after.upos in ("NOUN", "PROPN", "NUM", "SYM", "DET")
        return not counted and self.text_of(i + 1) not in _PERCENT | {"per", "each", "apiece"}

    def clock_in_words(self, i: int) -> int | None:
        """The last token of a time of day said in words at ``i``, else ``None``: minutes past an hour, or to it
        after ``minutes``, ``at`` or ``it's`` (``six minutes past seven``, ``ten past six``, ``five minutes to six``,
        ``It's twenty-five to nine``; not ``two to ten people``), the British ``half six`` after ``at``, or an hour a
        clock strikes (``struck eleven``; not ``struck three matches``), an hour after ``until`` (``until about
        nine``), before ``sharp`` (``at six sharp``) or with its minutes in words (``the nine-forty service``, ``the
        nine forty-two service``, which a noun may follow). No noun may follow the others: ``ten past papers`` counts
        them."""
        word = self.text_of(i)
        after = None
        hour = word in UNIT_WORDS and self.clock_hour(i)  # "one" to "twelve"
        if hour and (self.time_of_day_after(i) or self.hours_from_till(i)):
            return i  # "before eight in the morning", "from eleven till five"
        if hour and self.text_of(i + 1) == "sharp":
            after = i + 1  # "left the inn at six sharp" (not "six sharp pieces": no noun may follow)
        departure = self.departure_time_end(i)
        if departure is not None:
            return departure  # "the nine forty-two service", "ON TWO FIFTEEN TRAIN"
        minutes, end = self.word_run(i)[:2] if word in UNIT_WORDS or word in TENS_WORDS else (0, i)
        if 1 <= minutes < 60:  # "twenty-five minutes past nine": the minutes may be a run of words
            j = end + 1 if self.text_of(end + 1) in ("minutes", "minute") else end
            # "to" only after "minutes" ("from two to ten people", "feeds four to six," are ranges) or where the
            # minutes are a clock's (5, 10, 20, 25) after "at" or "it's": "stood at twenty to four", "It's ten to nine"
            telling = minutes in (5, 10, 20, 25) and self.text_of(i - 1) in ("at", "'s", "’s")
            relation = ("past", "to") if j > end or telling else ("past",)
            if self.text_of(j + 1) in relation and self.clock_hour(j + 2) and not self.raw(j + 2).isdigit():
                after = j + 2
        if word == "half" and self.text_of(i - 1) == "at" and self.clock_hour(i + 1) and not self.raw(i + 1).isdigit():
            after = i + 1
        if hour and self.text_of(i - 1) in _STRIKE_VERBS:
            after = i
        until = self.text_of(i - 2 if self.text_of(i - 1) in ("about", "around") else i - 1)
        next_up = self.tokens[i + 1].upos if i + 1 < len(self.tokens) else "PUNCT"
        if hour and until in _TILL and next_up == "PUNCT":
            after = i  # "fog patches until about nine." (not "until four triangles exist")
        if hour and self.text_of(i + 1) == "-" and self.adjacent(i, i + 1):
            minutes = UNIT_WORDS.get(self.text_of(i + 2), TENS_WORDS.get(self.text_of(i + 2)))
            if isinstance(minutes, int) and 10 <= minutes < 60 and self.adjacent(i + 1, i + 2):
                return i + 2  # "the nine-forty service", "at eleven-fifteen" (not "one-eighty": no minutes)
        following = self.tokens[after + 1] if after is not None and after + 1 < len(self.tokens) else None
        if after is None or following is not None and following.upos in ("NOUN", "PROPN", "NUM"):
            return None
        return after

    def departure_time_end(self, i: int) -> int | None:
        """The last token of an hour and its minutes in words, written apart, that name a train, a bus or a flight
        (``the nine forty-two service``, ``the two fifteen train``), else ``None``."""
        if not (self.text_of(i) in UNIT_WORDS and self.clock_hour(i)):
            return None
        word = self.text_of(i + 1)
        if not (word in TENS_WORDS or UNIT_WORDS.get(word, 0) >= 10):
            return None
        minutes, end = self.word_run(i + 1)[:2]
        return end if 10 <= minutes < 60 and self.text_of(end + 1) in _DEPARTURES else None

    def time_of_day_after(self, i: int, after_and: bool = True) -> bool:
        """An hour at ``i`` after a word of time and before a part of the day or ``latest``: ``before 8 in the
        morning``, ``after six in the evening``, ``until ten at night``, ``by 8 latest``, ``by nine at the latest``,
        ``the hours of eleven in the morning``, ``between 9 in the morning and 5 in the evening`` (the second hour
        after ``and`` where the first is one; not ``sells another 4 in the afternoon``: a count)."""
        if self.hour_closing_a_clause(i):
            return True  # "doors are at 7", "the lorry comes at like 7", "can u feed the cat at like 6, she"
        before = self.text_of(i - 1)
        if before == "at" and (self.text_of(i - 2) in _OPENING_VERBS or self.weekday(i - 2)):
            following = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
            counted = following is not None and following.upos in ("NOUN", "PROPN", "NUM", "SYM", "ADJ")
            if not counted and self.text_of(i + 1) not in ("past", "to", "-"):
                return True  # "they shut at 6 and", "take Alfie Weds at 10,": no count, no minutes follow
        if before == "and" and after_and and self.text_of(i - 2) in _PARTS_OF_THE_DAY:
            first = i - 4 if self.text_of(i - 2) == "night" else i - 5  # "9 in the morning and", "11 at night and"
            if not (first >= 0 and self.clock_hour(first) and self.time_of_day_after(first, after_and=False)):
                return False
        elif before not in _TIME_PREPOSITIONS and not (before == "of" and self.text_of(i - 2) == "hours"):
            return False
        part = self.text_of(i + 3) if self.text_of(i + 1) in ("in", "at") and self.text_of(i + 2) == "the" else None
        return (
            part in ("morning", "afternoon", "evening", "latest")
            or self.text_of(i + 1) == "latest"
            or self.text_of(i + 1) == "at"
            and self.text_of(i + 2) == "night"
        )

    def hour_closing_a_clause(self, i: int) -> bool:
        """An hour at ``i`` said after ``at`` (or ``at like``, ``at about``), or after ``open till``, that closes its
        clause, as speech and messages give a time: the end of the sentence, a comma no number follows, ``so``,
        ``tho``, ``then``, ``but``, a place, a span or a habit (``doors are at 7``, ``up at three every morning``,
        ``grab u at 8.10, leave 25 mins``, ``the lorry comes at like 7``, ``the co-op's open til 10``, ``drinks at 8
        at the usual place``, ``at 1 for half an hour``). Not at the start of a sentence (``At 5, she could read``:
        an age), in a problem of prices, ages, scores or sequences (``sold them at 2.``, ``tied at 3 at the break``),
        after a verb of a first or last value unless hedged (``The counter starts at 5.``), nor in a list (``a rest
        stop at 2, 4, 6``)."""
        at = i - 2 if self.text_of(i - 1) in _HEDGES else i - 1
        open_till = self.text_of(at) in _TILL and self.text_of(at - 1) in _OPENING_VERBS
        if not (self.text_of(at) == "at" or open_till) or self.raw(at)[:1].isupper() or self.words & _NOT_AN_HOUR_AT:
            return False
        if at == i - 1 and self.text_of(at - 1) in _BOUND_VERBS:
            return False  # "The counter starts at 5." (but "the party starts at like 8")
        if i + 1 >= len(self.tokens):
            return True
        after, then = self.text_of(i + 1), self.text_of(i + 2)
        if after == ",":
            return i + 2 >= len(self.tokens) or self.tokens[i + 2].upos != "NUM"
        if after == "at" and then in _PLACE_DETERMINERS or after == "for" and then in ("a", "an", "half", "the"):
            return True  # "drinks at 8 at the usual place", "take rex out at 1 for half an hour"
        if after == "every" and (then in _PARTS_OF_THE_DAY or then == "day"):
            return True  # "up at three every morning"
        return after in (".", "!", "?", ";", "so", "tho", "then", "but")

    def hours_from_till(self, i: int) -> bool:
        """An hour of ``from 11 till 5``, a shift's ``on 7 till 3``, ``Weds, 7 till 9``, a delivery ``slot is 8 till
        12`` or ``between 10 and 2`` (the second hour before the first: across noon; either one, digits or words,
        each 1 to 12, no noun after the second): a span of the clock, not of counts (``from 3 to 5 apples`` says
        "to", and counts; ``between 2 and 5`` is a range)."""
        across_noon = False
        opens = _CLOCK_SPAN_OPENERS
        if (self.text_of(i - 1) in opens or self.weekday(i - 1)) and self.text_of(i + 1) in _TILL:
            first, second = i, i + 2
        elif self.text_of(i - 1) in _TILL and (self.text_of(i - 3) in opens or self.weekday(i - 3)):
            first, second = i - 2, i
        elif self.text_of(i - 1) == "between" and self.text_of(i + 1) == "and":
            first, second, across_noon = i, i + 2, True
        elif self.text_of(i - 1) == "and" and self.text_of(i - 3) == "between":
            first, second, across_noon = i - 2, i, True
        else:
            return False
        if across_noon and not (self.clock_hour(first) and self.hour_value(first) > (self.hour_value(second) or 0)):
            return False  # "between 2 and 5" is a range of counts; "between 10 and 2" can only be the clock
        following = self.tokens[second + 1] if second + 1 < len(self.tokens) else None
        return (
            self.clock_hour(first)
            and self.clock_hour(second)
            and (following is None or following.upos not in ("NOUN", "PROPN", "NUM"))
        )

    def oven_setting(self, i: int) -> tuple[int, Fraction] | None:
        """``two-twenty``, ``one-ninety``, ``one seventy`` at ``i`` in a sentence about an oven (``_OVEN_WORDS``): a
        temperature said as hundreds and tens (220, 190, 170), its last token and value; else ``None``."""
        hundreds = UNIT_WORDS.get(self.text_of(i))
        hyphen = self.text_of(i + 1) == "-" and self.adjacent(i, i + 1) and self.adjacent(i + 1, i + 2)
        last = i + 2 if hyphen else i + 1  # "two-twenty", or "one seventy" said with a space
        tens = TENS_WORDS.get(self.text_of(last))
        if not (isinstance(hundreds, int) and 1 <= hundreds <= 9 and tens) or self.text_of(last + 1) == "-":
            return None  # not "two twenty-minute batches"
        following = self.tokens[last + 1] if last + 1 < len(self.tokens) else None
        if not hyphen and following is not None and following.upos in ("NOUN", "PROPN", "ADJ", "NUM"):
            return None  # "bake two twenty dollar cakes": two counts
        if not self.words & _OVEN_WORDS:
            return None
        return last, Fraction(hundreds * 100 + tens)

    def weekday(self, i: int) -> bool:
        """Token ``i`` is a day of the week, capitalised (``Sat``, ``Thurs``; not ``sat 6 people``)."""
        return self.text_of(i).rstrip(".") in _WEEKDAYS and self.capitalised(i)

    def clock_hour(self, i: int) -> bool:
        """Token ``i`` is an hour of a clock, 1 to 12, in words or digits (``seven``, ``5``)."""
        hour = self.hour_value(i)
        return isinstance(hour, int) and 1 <= hour <= 12

    def hour_value(self, i: int) -> int | None:
        """The whole number token ``i`` says in digits or in one word (``7``, ``seven``, ``ten``), else ``None``."""
        word = self.text_of(i)
        return int(word) if word.isdigit() else UNIT_WORDS.get(word, TENS_WORDS.get(word))

    def compared_over(self, i: int) -> bool:
        """``a decade`` at ``i`` closes ``in a decade`` or ``for a decade`` after a superlative (``its worst result in
        a decade``, ``the first time in a century``, ``the highest figure for a decade``): the span a record is
        compared over, not a number of years."""
        return self.text_of(i - 2) in ("in", "for") and any(self.superlative(k) for k in range(i - 2))

    def superlative(self, k: int) -> bool:
        """Token ``k`` ranks: a word of ``_SUPERLATIVE_WORDS`` or an adjective in -est (``smallest``, ``wettest``;
        not ``honest``, ``modest``)."""
        word = self.text_of(k)
        return word in _SUPERLATIVE_WORDS or (
            word.endswith("est") and word not in _ADJECTIVES_IN_EST and self.tokens[k].upos in ("ADJ", "ADV")
        )

    def rate_period(self, i: int) -> bool:
        """``a century`` at ``i`` closes ``in a century`` right after an amount (``grow less than 1mm in a century``,
        ``rose 4% in a decade``): the period of a rate, as ``2 inches a year`` is, not a number of years."""
        if self.text_of(i - 2) != "in":
            return False
        for k in range(i - 3, max(i - 7, -1), -1):
            word = self.text_of(k)
            if word in _CLAUSE_END:
                return False
            if word[:1].isdigit() or word in UNIT_WORDS or word in TENS_WORDS or word.endswith("fold"):
                return True  # "rose 4% in a decade", "jumped tenfold in a decade"
        return False

    def names_a_kind(self, i: int) -> bool:
        """``double``, ``triple`` name a kind of thing, not a multiple, after an article or an adjective: ending its
        phrase (``each ordered triple in``, ``a Pythagorean triple``, ``an O'Hara triple``) or before its noun (``the
        double cone``, ``a double root``); ``triple the points``, ``quadruple that amount``, ``its double``, ``double
        points`` and ``a quadruple batch`` (of an amount or a measure) are multiples."""
        token = self.tokens[i]
        head, relation = self.reader.parent(token.id)
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        if after is not None and after.kind == "math" and i > 0:
            before = self.tokens[i - 1]
            if self.text_of(i - 1) in _KIND_DETERMINERS or before.upos in ("ADJ", "VERB", "PROPN"):
                return True  # "the ordered quadruple $(a, b, h, k)$": the formula after it is the tuple
        modifies = head is not None and after is not None and head.id == after.id
        if modifies and _is_measure(head, _MEASURES | _AMOUNT_NOUNS) or after and after.upos in ("DET", "NUM", "PRON"):
            return False  # "a quadruple batch" is four batches; "triple the points", "quadruple that amount"
        if self.text_of(i + 1) == "-" and self.adjacent(i, i + 1):
            return False  # "double-page spreads", "double-counted": read as before
        if after is not None and after.label in _KIND_NOUNS:
            return True  # "double cream", "a double bed", "a double helix"
        determined = self.text_of(i - 1) in _KIND_DETERMINERS
        before = self.tokens[i - 1].upos if i > 0 else ""
        modified = before in ("ADJ", "PROPN") or self.text_of(i - 2) in _KIND_DETERMINERS and before == "VERB"
        if not (determined or modified):
            return False  # "its double", "40 double-page spreads"
        if after is None or after.upos not in ("NOUN", "PROPN", "ADJ"):
            return True  # the noun ends its phrase: "an ordered triple in S"
        return determined and modifies and relation in ("dep:amod", "dep:compound")  # "the double cone"

    def a_coin(self, i: int) -> bool:
        """``a quarter`` at ``i`` is the coin: its sentence speaks of coins (``coins``, ``cents``, ``dimes``,
        ``change``...) and no ``of`` or noun follows it (``a quarter of the coins``, ``a quarter mile`` are 1/4)."""
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        if after is not None and (after.label in ("of", "-") or after.upos == "NOUN"):
            return False
        return not self.words.isdisjoint(_COIN_WORDS)

    def one_and_the_other(self, i: int) -> bool:
        """``one`` paired with ``the other`` later in its sentence (``in one class and ... in the other``): it picks
        one of two things, as a pronoun does."""
        if self.text_of(i + 1) in ("of", "-", "hundred", *SCALE_WORDS) or self.text_of(i - 1) in ("and", "or"):
            return False
        for k in range(i + 1, min(i + 15, len(self.tokens) - 1)):
            if self.text_of(k) == "the" and self.text_of(k + 1) == "other":
                after = self.tokens[k + 2] if k + 2 < len(self.tokens) else None
                return after is None or after.upos not in ("NOUN", "PROPN", "ADJ", "NUM")  # not "the other kids"
        return False

    def inside_hyphenated_word(self, i: int) -> bool:
        """The number word is part of a hyphenated word that is not a number: ``non-zero``, ``half-life``,
        ``half-brother``, ``one-way``, ``one-to-one`` (``half-hour`` is half an hour, ``four-digit`` four digits:
        numbers)."""
        if self.text_of(i - 1) == "-" and self.adjacent(i - 2, i - 1) and self.adjacent(i - 1, i):
            if self.text_of(i - 2) in ("to", "on") and self.text_of(i - 4) == "one":
                return True  # the second "one" of "one-to-one", "one-on-one"
            before = self.text_of(i - 2)
            if before in _HYPHEN_PREFIXES:
                return True
            # "the fly-half", "a scrum-half": a word of its own ending in a number word (not "twenty-one",
            # "two-and-a-half", "best-of-three", "a top-ten finish", "the under-twelves")
            return (
                before.isalpha()
                and before not in _NUMBER_WORDS
                and before not in _COMPOUND_NUMBER_PREFIXES
                and not self.text_of(i + 1) == "-"
            )
        hyphen = self.text_of(i + 1) == "-" and self.adjacent(i, i + 1) and self.adjacent(i + 1, i + 2)
        word, after = self.text_of(i), self.text_of(i + 2)
        if hyphen and word == "one" and after in _ONE_COMPOUNDS or hyphen and word == "two" and after == "way":
            return True  # "a one-way ticket", "one-off", "one-to-one", "a two-way radio"
        if hyphen and word == "half" and after == "year" and self.text_of(i - 1) in _NAME_DETERMINERS:
            return True  # "losses for the half-year": a reporting period (not "a half-year wait")
        return hyphen and word == "half" and after in _HALF_COMPOUNDS

    def ordinal_before_noun(self, i: int) -> bool:
        """An ordinal word after ``a`` that ranks the noun after it (``a third set``, ``a fifth grader``), not a
        fraction (``a third of``, ``a third cup``: a measure after it is a fraction of that measure)."""
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        if after is None or after.upos not in ("NOUN", "PROPN"):
            return False
        return (after.lemma or after.label).lower() not in _FRACTION_OF

    def in_an_idiom(self, i: int) -> bool:
        """The number word at ``i`` is part of one of ``_IDIOMS``: it counts nothing."""
        word = self.text_of(i)
        for idiom in _IDIOMS:
            for offset, idiom_word in enumerate(idiom):
                start = i - offset
                if idiom_word == word and all(self.text_of(start + k) == w for k, w in enumerate(idiom)):
                    article = self.text_of(start - 1) in _ARTICLES | {"the"}
                    return not (article and idiom in _IDIOMS_NOT_AFTER_AN_ARTICLE)
        return False

    def once_counted(self, i: int) -> bool:
        """``once`` at ``i`` counts by the words around it: after a word that counts it (``more than once``), before
        ``only`` or a span (``once only``, ``once a fortnight``), or closing a clause in a problem that says ``twice``
        (``ran late twice and hit a deer once.``; not ``Once, she went twice``)."""
        after = self.text_of(i + 1)
        if self.text_of(i - 1) in _ONCE_COUNTED_AFTER or after == "only":
            return True
        if after in ("a", "an", "every", "per") and self.text_of(i + 2) in _ONCE_PER:
            return True
        closes = after in (".", ",", ";", "!", "?", "") and i > 0 and self.tokens[i - 1].upos != "PUNCT"
        return closes and not self.words.isdisjoint(("twice", "thrice"))

    def once_after_its_verb(self, i: int) -> bool:
        """``once`` right after the verb it counts, or after the verb's particle (``we'll only stop once for
        coffee``, ``visited once a year``, ``goes out once a week``), not opening a clause (``stop once the light
        turns``, ``call once he lands``) nor in an idiom (``ran once again``)."""
        verb = i - 2 if self.text_of(i - 1) in _VERB_PARTICLES else i - 1
        before = self.tokens[verb] if verb >= 0 else None
        if before is None or before.upos != "VERB" or self.text_of(i + 1) in _CLAUSE_OPENERS:
            return False
        if self.text_of(i + 1) == "every":  # "sneezes once every 3 seconds"; "finishes once every car has passed"
            period = self.tokens[i + 2] if i + 2 < len(self.tokens) else None
            return period is not None and (period.upos == "NUM" or _is_measure(period))
        return True

    def after_a_determined_measure(self, i: int) -> bool:
        """A measure with its number and a determiner before ``i``: ``the 500ml``, ``the 2-litre``, ``a 10 kg``."""
        determiners = _PRONOUN_ONE_BEFORE | _ARTICLES
        if re.fullmatch(r"\d[\d.,]*[A-Za-z]+", self.raw(i - 1)):
            return self.text_of(i - 2) in determiners
        if i < 2 or not _is_measure(self.tokens[i - 1]):
            return False
        number = i - 2 - int(self.text_of(i - 2) == "-")
        return bool(_STARTS_LIKE_NUMBER_RE.match(self.text_of(number))) and self.text_of(number - 1) in determiners

    def one_after_a_complementizer(self, i: int) -> bool:
        """``that`` before ``one`` opens a clause and ``one`` counts the singular noun after it (``We are given that
        one solution is``, ``such that one side is``, ``painted so that one side is``), not ``I like that one``,
        ``knew that one day`` (a time)."""
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        return (
            self.text_of(i - 1) == "that"
            and i >= 2
            and (self.tokens[i - 2].upos == "VERB" or self.text_of(i - 2) in ("such", "so"))
            and after is not None
            and after.upos == "NOUN"
            and not _plural(after)
            and not _is_measure(after)
        )

    def one_in_n(self, i: int) -> bool:
        """``one`` at ``i`` opens a proportion, ``one in five``, ``one out of ten``: a count even after ``that`` or
        ``each`` (``found that one in five had not``)."""
        if self.text_of(i + 1) == "in":
            number = self.text_of(i + 2)
        elif self.text_of(i + 1) == "out" and self.text_of(i + 2) == "of":
            number = self.text_of(i + 3)
        else:
            return False
        return number in UNIT_WORDS or number in TENS_WORDS or bool(_STARTS_LIKE_NUMBER_RE.match(number))

    def pronoun_one(self, i: int) -> bool:
        """``one`` standing for a noun: ``the red one``, ``that one costs``, ``each one``, ``one at a time``."""
        if self.fraction_after(i + 1) or self.text_of(i + 1) in ("-", "hundred", *SCALE_WORDS, *ORDINAL_DENOMINATORS):
            return False
        if self.tokens[i].upos != "NUM" and not self.counts_of(i):
            return True
        if i + 1 < len(self.tokens) and _is_measure(self.tokens[i + 1], _MEASURE_UNITS):
            return False  # "for every one pound of food": one of a measure counts
        if self.text_of(i - 1) == "every" and self.text_of(i + 1) == "of":
            return True  # "every one of the seven books": each of them (not "for every one pound")
        if self.after_a_determined_measure(i):
            return True  # "cheaper than the 500ml one", "the 2-litre one": a measure, then "one" for the bottle
        if self.text_of(i + 1) == "of":
            # "the middle one of five children", "the first one of the pies": one of them, not a count
            before = self.tokens[i - 1] if i > 0 else None
            described = before is not None and (before.upos == "ADJ" or before.label in ORDINAL_WORDS)
            return described and self.text_of(i - 2) in {"the", *_ARTICLES, *_POSSESSIVES}
        upos_after = [t.upos for t in self.tokens[i + 1 : i + 3]]
        if self.text_of(i - 1) == "any" and (upos_after[:1] == ["NOUN"] or upos_after == ["ADJ", "NOUN"]):
            return False  # "in any one calendar week", "any one person may buy 2": one week, one person
        if self.text_of(i - 1) in _PRONOUN_ONE_BEFORE:
            return not self.one_after_a_complementizer(i) and not self.one_in_n(i)
        if self.text_of(i - 1) == "than" and self.text_of(i - 2) not in _AMOUNT_COMPARATIVES:
            return self.text_of(i + 1) in ("with", "that", "which", "who", "whose")  # "more acidic than one with"
        if self.text_of(i + 1) == "at" and self.text_of(i + 2) in _ARTICLES and self.text_of(i + 3) == "time":
            return True
        if self.text_of(i + 1) == "(" and self.text_of(i + 2) == "1" and self.text_of(i + 3) == ")":
            return False  # "to moor one (1) vessel": a contract restates the number in digits
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else None
        before = self.tokens[i - 1] if i > 0 else None
        if before is not None and before.upos in ("ADJ", "VERB") and (after is None or after.upos == "PUNCT"):
            return True  # "I want a red one."
        if before is not None and before.upos in ("NOUN", "PROPN") and (after is None or after.upos == "PUNCT"):
            if self.text_of(i - 2) in _PRONOUN_ONE_BEFORE | _ARTICLES:
                return True  # "30p more for the vegan one.": a noun that describes, then "one" for the roll
        # "the blue one is yours", "a bigger one would": a determiner and an adjective, then no noun for "one" to count
        return (
            before is not None
            and before.upos == "ADJ"
            and self.text_of(i - 2) in _PRONOUN_ONE_BEFORE | _ARTICLES
            and (after is None or after.upos not in ("NOUN", "PROPN", "ADJ", "NUM"))
        )

    def vague_scale(self, i: int) -> bool:
        """A bare scale word that is not a number: ``several hundred``, ``the Thousand Islands``; ``thousand``,
        ``hundred and twelve`` and ``the thousand-metre mark`` (a measure joined to it) are numbers."""
        before = self.text_of(i - 1)
        joined = self.text_of(i + 1) == "-" and self.adjacent(i, i + 1) and i + 2 < len(self.tokens)
        if before == "the" and joined and _is_measure(self.tokens[i + 2]):
            return False  # "the hundred-metre final": a distance, as "a hundred-metre sprint" is
        return before in _VAGUE_BEFORE or before in UNIT_WORDS or before in TENS_WORDS or self.capitalised(i) and i > 0

    def signed_at(self, i: int) -> tuple[list[Quantity], int] | None:
        """``minus fifteen``, ``negative 3``: the number after a sign word, negated (not ``10 minus 3``)."""
        before = self.text_of(i - 1)
        if (
            parse_number(before) is not None
            or before in UNIT_WORDS
            or before in TENS_WORDS
            or i + 1 >= len(self.tokens)
        ):
            return None
        after = self.digits_at(i + 1) if _STARTS_LIKE_NUMBER_RE.match(self.text_of(i + 1)) else self.words_at(i + 1)
        if after is None or len(after[0]) != 1:
            return None
        quantity = after[0][0]
        span = (self.tokens[i].span[0], quantity.span[1])
        negated = replace(quantity, value=-quantity.value, span=span, text=self.graph.text[span[0] : span[1]])
        return [negated], after[1]

    def point_at(self, i: int) -> tuple[list[Quantity], int] | None:
        """``point one``, ``point fifteen``: a decimal fraction spoken without its whole part."""
        if self.text_of(i - 1) in _ARTICLES or self.text_of(i - 1) in ("the", "this", "that"):
            return None
        read = self.decimals_after(i - 1)
        if read is None:
            return None
        digits, last = read
        return [self.make(i, last, Fraction(int(digits), 10 ** len(digits)), "word")], last + 1

    def decimals_after(self, last: int) -> tuple[str, int] | None:
        """The digits spoken after ``point`` at ``last + 1`` (``point zero five`` -> ``05``, ``point ninety-nine``
        -> ``99``, ``point two hundred thirty-six`` -> ``236``) and the last token, else ``None``."""
        if self.text_of(last + 1) != "point":
            return None
        j, digits = last + 2, ""
        while self.text_of(j) in _DIGIT_WORDS:
            digits, j = digits + str(_DIGIT_WORDS[self.text_of(j)]), j + 1
        if digits and self.text_of(j) not in TENS_WORDS and self.text_of(j) not in ("hundred", "-"):
            return digits, j - 1
        if self.text_of(last + 2) not in UNIT_WORDS and self.text_of(last + 2) not in TENS_WORDS:
            return None
        run = self.word_run(last + 2)
        return str(run[0]), run[1]

    def spoken_year_end(self, i: int) -> int | None:
        """The last token of a year said in words at ``i`` (``nineteen eighty-four``, ``eighteen twelve``,
        ``nineteen oh five``), else ``None``: a century word right before a tens word or ``oh``."""
        if self.text_of(i) not in ("seventeen", "eighteen", "nineteen"):
            return None
        after = self.text_of(i + 1)
        if after == "oh" and 1 <= UNIT_WORDS.get(self.text_of(i + 2), 0) <= 9:
            return i + 2
        if after not in TENS_WORDS and not (after in UNIT_WORDS and UNIT_WORDS[after] >= 10):
            return None
        hyphen = self.text_of(i + 2) == "-"
        unit_follows = after in TENS_WORDS and 1 <= UNIT_WORDS.get(self.text_of(i + 2 + hyphen), 0) <= 9
        if hyphen and not unit_follows:
            return None  # "nineteen twenty-dollar bills": a count of what the hyphen joins
        return i + 2 + hyphen if unit_follows else i + 1

    def thousands_year_end(self, i: int) -> int | None:
        """The last token of a year of this century or the last said as thousands (``in two thousand and eight``,
        ``September, two thousand and twenty-five``, ``the first of April two thousand and five``) at ``i``, else
        ``None``: a run of number words worth 1900 to 2099 with ``thousand`` or ``hundred`` in it, after ``in``,
        ``since``, ``until`` or a month (not ``rose by two thousand and ten``), and before no noun it would count
        (not ``in two thousand steps``)."""
        before = self.text_of(i - 1)
        after_month = before == "," and self.text_of(i - 2).rstrip(".") in MONTHS
        after_month |= before in MONTHS and self.raw(i - 1)[:1].isupper()  # "the first of April two thousand and five"
        if before not in ("in", "since", "until") and not after_month:
            return None
        total, last, _, _ = self.word_run(i)
        words = {self.text_of(k) for k in range(i, last + 1)}
        if not (1900 <= total <= 2099 and words & {"thousand", "hundred"}):
            return None
        following = self.tokens[last + 1] if last + 1 < len(self.tokens) else None
        return last if following is None or following.upos not in ("NOUN", "PROPN", "NUM") else None

    def scale_of(self, i: int) -> int | None:
        word = self.text_of(i)
        return 12 if word == "dozen" else 100 if word == "hundred" else SCALE_WORDS.get(word)

    def and_a_half_at(self, i: int) -> tuple[list[Quantity], int]:
        """``an hour and a half`` (3/2 hours), ``a serving and a half of pancakes``, ``a dozen and a half`` (18)."""
        token = self.tokens[i]
        half, last = self.fraction_after(i + 1)
        scale = self.scale_of(i) or 1
        if scale != 1:
            return [self.make(i, last, scale * (1 + half), "word", number_tokens=(i, i))], last + 1
        noun = token.label
        measure = (token.lemma or noun).lower() in _MEASURES or noun in _MEASURES
        counted = self.reader.of_object(self.tokens[last].id) or self.reader.of_object(token.id)
        counted_label = counted.label if counted is not None else None if measure else noun
        span = (token.span[0], self.tokens[last].span[1])
        return [self.quantity(span, 1 + half, "word", token, noun if measure else None, counted_label)], last + 1

    def counts_of(self, i: int) -> bool:
        """``one of the boys`` counts; ``one`` alone tagged as a noun or pronoun does not."""
        return self.reader.of_object(self.tokens[i].id) is not None and self.text_of(i - 1) not in ("the", "which")

    def word_run(self, i: int) -> tuple[int, int, str, tuple[int, int] | None]:
        """The value of the run of number words at ``i``, its last token, the kind of its last word (``unit``,
        ``teen``, ``tens``, ``hundred``, ``scale``) and, when an ``and`` joined its last part, the value before
        that ``and`` and the part after it (``one hundred and three`` -> ``(100, 3)``).

        ``two thousand and nineteen`` is 2019, ``three million, two hundred & forty`` 3,000,240, ``hundred
        fifteen`` 115, ``seventy-five thousands`` 75,000; a word that cannot follow the one before it ends the
        run, so ``one two three`` and ``sixty fifteen`` are numbers each, and ``two thousand, two million`` two.
        """
        total, current, last, j, kind = 0, 0, i, i, ""
        scale_before, joined = None, None
        while j < len(self.tokens):
            word = self.text_of(j)
            value = UNIT_WORDS.get(word)
            if value is not None:
                if kind in ("unit", "teen") or kind == "tens" and (value >= 10 or value == 0):
                    break  # "one two", "sixty fifteen"
                current, kind = current + value, "teen" if value >= 10 else "unit"
            elif word in TENS_WORDS:
                if kind in ("unit", "teen", "tens"):
                    break  # "twenty thirty", "fifteen twenty"
                current, kind = current + TENS_WORDS[word], "tens"
            elif word in ("hundred", "hundreds") and (word == "hundred" or j > i):
                if kind == "hundred" or current >= 100:
                    break
                current, kind = max(current, 1) * 100, "hundred"
            elif word in SCALE_WORDS or (word in _PLURAL_SCALES and j > i and word != "hundreds"):
                scale = SCALE_WORDS.get(word) or _PLURAL_SCALES[word]
                if scale_before is not None and scale >= scale_before:
                    break  # "two thousand million" is read as 2000 and a million
                total, current, kind, scale_before = total + max(current, 1) * scale, 0, "scale", scale
            elif self.joins(j, kind, scale_before):
                if word in _JOINERS:
                    joined = (total + current, j)
                j += 1
                continue
            else:
                break
            last = j
            j += 1
        after_and = (joined[0], total + current - joined[0]) if joined is not None and joined[1] < last else None
        return total + current, last, kind, after_and

    def joins(self, j: int, kind: str, scale_before: int | None) -> bool:
        """Token ``j`` (``-``, ``and``, ``&``, ``,``) joins two parts of one number: ``twenty - five``, ``two
        hundred and five``, ``two thousand and nineteen``, ``three million, two hundred`` (a comma only after a
        scale word and before a smaller part)."""
        word, after = self.text_of(j), self.text_of(j + 1)
        starts = after in UNIT_WORDS or after in TENS_WORDS
        if word == "-":
            return kind == "tens" and after in UNIT_WORDS and 0 < UNIT_WORDS[after] < 10
        if word in _JOINERS:
            return kind in ("hundred", "scale") and (starts or after == "hundred" and kind == "scale")
        if word == "," and kind == "scale" and starts and scale_before is not None:
            value = self.word_run(j + 1)[0]
            return value < scale_before
        return False

    def number_words_at(self, i: int) -> tuple[list[Quantity], int]:
        """A run of number words (``word_run``), then what may follow it: ``two thirds``, ``two dozen``, ``two and
        a half``, ``forty per cent``, ``two point three``; ``twenty-first`` and ``two hundred thirtieth`` are ranks
        (no quantity)."""
        total, last, kind, after_and = self.word_run(i)
        ordinal = self.text_of(last + 2) if self.text_of(last + 1) == "-" else self.text_of(last + 1)
        if ordinal in ORDINAL_WORDS and kind in ("tens", "hundred", "scale") and self.text_of(i - 1) not in _ARTICLES:
            return [], last + (3 if self.text_of(last + 1) == "-" else 2)  # "twenty second", "twenty-first"
        decimals = self.decimals_after(last)
        if decimals is not None:  # "two point three", "twelve point ninety-nine"
            digits, last = decimals
            value = total + Fraction(int(digits), 10 ** len(digits))
            scale = self.scale_word(last + 1)
            if scale is not None:
                value, last = value * scale, last + 1  # "one point two billion"
            percent = self.percent_end(last + 1)
            if percent is not None:  # "six point two five per cent"
                return [self.make(i, percent, value / 100, "percent", "%", number_tokens=(i, last))], percent + 1
            return [self.make(i, last, value, "word")], last + 1
        value = Fraction(total)
        plural = self.text_of(last + 1) in ORDINAL_DENOMINATORS and self.text_of(last + 1).endswith("s")
        if after_and is not None and plural and 0 < after_and[1] < ORDINAL_DENOMINATORS[self.text_of(last + 1)]:
            before, count = after_and  # "one hundred and three quarters" is 100 3/4
            return [
                self.make(i, last + 1, before + Fraction(count, ORDINAL_DENOMINATORS[self.text_of(last + 1)]), "word")
            ], last + 2
        half = self.fraction_after(last + 1)
        if half is not None:
            value, last = value + half[0], half[1]  # "two and a half"
            scale = self.scale_word(last + 1)
            if scale is not None:
                value, last = value * scale, last + 1  # "six and a half thousand"
        if self.text_of(last + 1) in ("dozen", "dozens"):
            value, last = value * 12, last + 1  # "two dozen", "two and a half dozen"
        denominator = ORDINAL_DENOMINATORS.get(self.text_of(last + 1)) if half is None else None
        if denominator is None and half is None and self.text_of(last + 1) == "-":
            denominator = ORDINAL_DENOMINATORS.get(self.text_of(last + 2))
            if denominator is not None:
                last += 1
        if denominator is not None:  # "two thirds", "one-fifth"
            return [self.make(i, last + 1, value / denominator, "word")], last + 2
        percent = self.percent_end(last + 1)
        if percent is not None:
            return [self.make(i, percent, value / 100, "percent", "%", number_tokens=(i, last))], percent + 1
        if kind not in ("hundred", "scale"):
            value *= self.range_scale(i, last, value) or 1  # the "two" of "between two and three million"
        return [self.make(i, last, value, "word")], last + 1
