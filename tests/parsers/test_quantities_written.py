"""Numbers as outside writers write them (reports, prices, science, IDs), read off real parses: what is a quantity,
its value, and what only looks like one."""

from fractions import Fraction

import pytest

from mathgraph.parsers.numbers import parse_number
from mathgraph.parsers.problem import ProblemParser

PARSER = ProblemParser("spacy")


def values(text: str) -> list[tuple[str, Fraction]]:
    return [(q.text, q.value) for q in PARSER.parse(text).quantities()]


@pytest.mark.parametrize(
    "written, value, form",
    [
        ("３５０", Fraction(350), "integer"),  # fullwidth digits
        ("１２．５", Fraction(25, 2), "decimal"),  # fullwidth decimal point
        ("１，２００", Fraction(1200), "integer"),  # fullwidth thousands comma
        ("٣٥٠", Fraction(350), "integer"),  # Arabic-Indic digits
        ("10⁶", Fraction(10**6), "integer"),
        ("10⁻¹²", Fraction(1, 10**12), "decimal"),
        ("4.5×10⁻³", Fraction(9, 2000), "decimal"),
        ("3 × 10⁸", Fraction(3 * 10**8), "integer"),
    ],
)
def test_parse_number_reads_fullwidth_digits_and_superscript_powers(written, value, form):
    assert parse_number(written) == (value, form)


@pytest.mark.parametrize("written", ["2³", "x²", "10⁻", "⁵"])
def test_a_superscript_power_of_another_base_is_no_number(written):
    assert parse_number(written) is None


def test_fullwidth_digits_decimals_and_percent_in_a_sentence():
    assert values("Total: ３５０ yen, tax included.") == [("３５０", Fraction(350))]
    assert values("It weighs １２．５ kg and ５０％ is water.") == [
        ("１２．５", Fraction(25, 2)),
        ("５０％", Fraction(1, 2)),
    ]


def test_a_power_of_ten_in_superscripts_is_one_number():
    assert values("The lab measured a concentration of 4.5 × 10⁻³ mol/L.") == [("4.5 × 10⁻³", Fraction(9, 2000))]
    assert values("A mole has 6.02×10²³ atoms and a mega is 10⁶ units.") == [
        ("6.02×10²³", Fraction(602 * 10**21)),
        ("10⁶", Fraction(10**6)),
    ]


def test_a_squared_unit_is_the_unit_not_a_number():
    found = PARSER.parse("The room is 12 m² and the box holds 3 cm³ of sand.").quantities()
    assert [(q.text, q.value, q.unit) for q in found] == [("12", 12, "m²"), ("3", 3, "cm³")]


def test_a_measure_between_a_number_and_its_noun_is_the_unit():
    by_text = {q.text: (q.unit, q.object) for q in PARSER.parse("Make 10 oz servings and 5 inch heels.").quantities()}
    assert by_text == {"10": ("oz", "servings"), "5": ("inch", "heels")}


def test_plus_minus_before_a_number_is_a_spread_not_a_sign():
    assert values("The survey has a margin of error of ±3 points.") == [("±3", Fraction(3))]
    assert values("An error of ±0.5 kg and ± 0.25 kg; the mass is 5 ± 2 g.") == [
        ("±0.5", Fraction(1, 2)),
        ("0.25", Fraction(1, 4)),
        ("5", Fraction(5)),
        ("2", Fraction(2)),
    ]


def test_a_scale_word_written_once_goes_with_both_ends_of_a_range():
    assert values("Costs are estimated at between $1.5 and $2 billion.") == [
        ("$1.5", Fraction(1_500_000_000)),
        ("$2 billion", Fraction(2_000_000_000)),
    ]
    assert values("Between 3 and 4 million people came, and two to three thousand left.") == [
        ("3", Fraction(3_000_000)),
        ("4 million", Fraction(4_000_000)),
        ("two", Fraction(2000)),
        ("three thousand", Fraction(3000)),
    ]


def test_a_range_whose_first_end_is_larger_keeps_it_as_written():
    assert values("Sales grew from 800 to 1.2 million, and 5 to 6 apples fell.") == [
        ("800", Fraction(800)),
        ("1.2 million", Fraction(1_200_000)),
        ("5", Fraction(5)),
        ("6", Fraction(6)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Revenue rose in fiscal 2025.",
        "Revenue rose in FY 2024 and in FY2023.",
        "The plan covers fiscal year 2022.",
        "Chapter 7 covers the years 1914 to 1918.",
        "The war of 1914–1918 changed Europe.",
        "Sales fell in early 2024 and again in mid-2023.",
        "Sales rose in Q3 2024 and in H1 2025.",
        "Music changed in the 1990s.",
    ],
)
def test_years_named_by_a_word_before_them_are_not_quantities(text):
    assert values(text) == []


def test_a_year_like_number_that_counts_stays_a_quantity():
    assert values("He ran 2025 meters, and 1500–2000 people came; prices are in 2024 dollars.") == [
        ("2025", Fraction(2025)),
        ("1500", Fraction(1500)),
        ("2000", Fraction(2000)),
        ("2024", Fraction(2024)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Call our help line on 0345 600 7890 between 8am and 6pm.",
        "Call us on 0800 123 4567 or 07700 900123.",
        "Our London office is on +44 20 7946 0958.",
        "The office number is 555 123 4567.",
        "The office number is (555) 123-4567.",
        "Call 555 1234 for a quote.",
    ],
)
def test_phone_numbers_in_groups_of_digits_are_not_quantities(text):
    assert values(text) == []


def test_thousands_groups_set_apart_by_spaces_stay_one_number():
    assert values("The survey of 1 024 adults cost 8 120 000 dollars.") == [
        ("1 024", Fraction(1024)),
        ("8 120 000", Fraction(8_120_000)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Order #48213 shipped today.",
        "The ISBN is 978-0-14-044913-6.",
        "The older ISBN is 0-306-40615-2.",
        "The parcel shipped on 2024-03-11.",
        "The 747-8 can carry more.",
        "Samsung's Galaxy S24 and the Pixel 8 were tested side by side.",
        "Boeing's 737-800 is smaller.",
        "The newer ISBN is 978-1-4028-9462-6.",
        "The parcel shipped on 2024-12-25.",
    ],
)
def test_ids_and_model_names_are_not_quantities(text):
    assert values(text) == []


def test_a_subtraction_written_with_hyphens_keeps_its_numbers():
    assert values("She made 72-24-5-4 = 39 and had 960-480-120 = 360 left.") == [
        (text, Fraction(int(text))) for text in ("72", "24", "5", "4", "39", "960", "480", "120", "360")
    ]


def test_counts_next_to_names_and_short_hyphen_chains_stay_quantities():
    assert values("A 3-4-5 triangle; the Celtics won 117-109; he rode the Catapult 2 times; the 2-1 win.") == [
        ("3", Fraction(3)),
        ("4", Fraction(4)),
        ("5", Fraction(5)),
        ("117", Fraction(117)),
        ("109", Fraction(109)),
        ("2", Fraction(2)),
        ("2", Fraction(2)),
        ("1", Fraction(1)),
    ]


def test_one_in_a_word_of_its_own_is_no_number_but_hyphenated_counts_are():
    assert values("A one-way ticket, a one-to-one map, a one-time fee, a two-way radio and a one-off deal.") == []
    assert values("He wrote a four-digit code in one-half of a half-hour.") == [
        ("four", Fraction(4)),
        ("one-half", Fraction(1, 2)),
        ("half", Fraction(1, 2)),
    ]


def test_double_and_triple_as_kinds_of_things_are_not_multiples():
    assert values("Each ordered triple in the set is counted, and a Pythagorean triple has 3 numbers.") == [
        ("3", Fraction(3))
    ]
    assert values("The double cone has 2 scoops.") == [("2", Fraction(2))]
    assert values("He scored triple the points of Ann and got double points.") == [
        ("triple", Fraction(3)),
        ("double", Fraction(2)),
    ]
    assert values("She makes a quadruple batch and each ordered triple and a double portion.") == [
        ("quadruple", Fraction(4)),
        ("double", Fraction(2)),
    ]
    assert values("An O'Hara triple; r is a double root; 48 more than its double; quadruple that amount.") == [
        ("48", Fraction(48)),
        ("double", Fraction(2)),
        ("quadruple", Fraction(4)),
    ]


def test_the_whole_part_before_a_bar_over_letters_is_a_literal():
    found = values(r"The form $0.abcabc\ldots=0.\overline{abc}$ and $0.1\overline{6}$.")
    assert [value for _, value in found] == [Fraction(0), Fraction(0), Fraction(1, 6)]


def test_a_currency_sign_after_the_amount_is_its_unit():
    found = PARSER.parse("The bike costs 175$. The lamp is 45 € and the mug 12.50 €, the hat 20£.").quantities()
    assert [(q.text, q.value, q.unit) for q in found] == [
        ("175$", 175, "$"),
        ("45 €", 45, "€"),
        ("12.50 €", Fraction(25, 2), "€"),
        ("20£", 20, "£"),
    ]


def test_a_currency_sign_that_opens_the_next_amount_stays_with_it():
    found = PARSER.parse("He has 5 $10 bills.").quantities()
    assert [(q.text, q.value, q.unit) for q in found] == [("5", 5, None), ("$10", 10, "$")]


def test_a_shape_word_or_a_container_before_the_noun_is_not_the_unit():
    found = PARSER.parse("The area is 432 square centimeters. He has 125 bottle caps.").quantities()
    assert [(q.text, q.unit, q.object) for q in found] == [("432", "centimeters", None), ("125", None, "caps")]


def test_arithmetic_with_brackets_written_without_spaces_gives_each_number():
    assert values("She ended with 8+(8*2)=24 of them.") == [
        (text, Fraction(int(text))) for text in ("8", "8", "2", "24")
    ]
    assert values("He had 3+(4*5)=23 apples and 2*(3+1)=8 pears.") == [
        (text, Fraction(int(text))) for text in ("3", "4", "5", "23", "2", "3", "1", "8")
    ]
    assert values("So (6+4)*2=20 in all.") == [(text, Fraction(int(text))) for text in ("6", "4", "2", "20")]
    # a formula in letters: every literal, as in a formula (not a partial read of its end)
    assert values("So (X+2)*(X+2+2)=80 here.") == [(text, Fraction(int(text))) for text in ("2", "2", "2", "80")]


@pytest.mark.parametrize(
    "text, expected",
    [
        # a formula in letters written with no spaces: every literal apart, a coefficient too, as in a formula
        ("The following expression is given: x=30*(100/200).", ["30", "100", "200"]),
        ("Then 2x+5=15 so x=5.", ["2", "5", "15", "5"]),
        ("And since all items totaled $240,000, then x+x+x+3x = $240,000", ["$240,000", "3", "$240,000"]),
        ("So 6x=60 and the cost is x=$10.", ["6", "60", "$10"]),
        # a unary minus with its number, a fraction that is not whole as one (a whole one, or a bracketed ratio not
        # in lowest terms, divides), a label before the formula, a question mark or a semicolon after it
        ("So x=-5 and -2X=-18 and 2x-3=-7.", ["-5", "-2", "-18", "2", "3", "-7"]),
        ("Then 3/4*t=3/4t and t=70*4/7 and n=240/5.", ["3/4", "3/4", "70", "4/7", "240", "5"]),
        ("Total:x+(x/2)+5+x=930", ["2", "5", "930"]),
        ("What is x if 2x+5=15? We get x=5; then y=6.", ["2", "5", "15", "5", "6"]),
        ("P=(2,3) and C(10,3)=120.", ["2", "3", "10", "3", "120"]),
        # an x that multiplies numbers is read as before, a unit's exponent and a scale letter are no literals
        ("He paid 20x$1=$20 and 25x.4=10.", ["20", "$1", "$20", "25", ".4", "10"]),
        ("It grew to 50K+ downloads, or $2K+$3K=$5K.", []),
        # a letter before a letter or a digit (a word, a subscript, an identifier), a doubled sign, one letter with
        # neither "=" nor a coefficient, or no "=", "+", "*", "^"
        ("Einstein wrote E=mc2 and 2H2+O2=2H2O.", []),
        ("The object lies behind MACS J1149.5+6663 in the sky.", []),
        ("The B-52 and the F-16 flew past.", []),
        ("It is written in C++11 and launches at T+5 days.", []),
    ],
)
def test_a_formula_in_letters_written_as_text_gives_every_literal(text, expected):
    assert [written for written, _ in values(text)] == expected


@pytest.mark.parametrize(
    "text, written, value",
    [
        ("Avogadro's number is about 6.022 × 10²³.", "6.022 × 10²³", Fraction(6022, 1000) * 10**23),
        ("Light travels 2.998 × 10⁸.", "2.998 × 10⁸", Fraction(2998, 1000) * 10**8),
        ("The charge of an electron is −1.602 × 10⁻¹⁹ C.", "−1.602 × 10⁻¹⁹", -Fraction(1602, 1000) / 10**19),
        ("The mass is −9.11 × 10⁻³¹ kg.", "−9.11 × 10⁻³¹", -Fraction(911, 100) / 10**31),
    ],
)
def test_a_superscript_power_at_a_sentence_end_or_after_a_signed_mantissa_is_one_number(text, written, value):
    assert values(text) == [(written, value)]


def test_a_vulgar_fraction_glued_to_a_hyphenated_unit():
    found = PARSER.parse("Slice it into ½-inch rounds and use a 1½-cup measure; cut ¾-inch cubes.").quantities()
    assert [(q.text, q.value, q.unit) for q in found] == [
        ("½", Fraction(1, 2), "inch"),
        ("1½", Fraction(3, 2), "cup"),
        ("¾", Fraction(3, 4), "inch"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Call +44 20 7946 0321, extension 204, to book.",
        "Ring 0113 496 0000 ext. 31 for help.",
        "Send the form to 14 Elm Road, Leeds LS6 2QB.",
        "Post it to London SW1A 1AA or Ottawa K1A 0B1.",
        "The 49ers and the 76ers played.",
        "Python 3.12 is faster than Python 3.11 here.",
        "The seminar has moved to Room 3.14.",
        "Take the number 38 bus.",
        "The number 42 tram stops here.",
    ],
)
def test_extensions_postcodes_team_names_versions_and_route_numbers_are_not_quantities(text):
    assert values(text) == []


def test_counts_after_a_command_opening_the_sentence_and_a_bare_number_stay_quantities():
    assert values("Order 3 items and get 10% off.") == [("3", Fraction(3)), ("10%", Fraction(1, 10))]
    assert values("Buy 2, get 1 free.") == [("2", Fraction(2)), ("1", Fraction(1))]
    assert values("Pick 2 cards.") == [("2", Fraction(2))]
    assert values("The number 42 is even.") == [("42", Fraction(42))]
    assert values("John 3.5 hours later arrived.") == [("3.5", Fraction(7, 2))]
    assert values("Route 66 is long.") == []


@pytest.mark.parametrize(
    "text",
    [
        "The 73 bus runs every few minutes at peak times.",
        "The Apollo 11 crew landed on the Moon.",
        "Schalke 04 drew at home.",
        "The parcel's tracking number is 1Z 999 AA1 01 2345 6784.",
        "The ferry sails at half past seven.",
        "We meet at a quarter to five.",
        "Board at gate 12 in Terminal 5.",
        "Year 9 pupils read section 4 first.",
    ],
)
def test_routes_names_codes_clock_times_in_words_and_labels_are_not_quantities(text):
    assert values(text) == []


def test_what_looks_like_a_route_a_label_or_a_clock_time_but_counts_stays_a_quantity():
    assert values("The 3 bus drivers went on strike.") == [("3", Fraction(3))]
    assert values("Each year 500 people visit.") == [("500", Fraction(500))]
    assert values("A room 12 feet wide costs more.") == [("12", Fraction(12))]
    assert values("Agent 007 has 4 cars.") == [("4", Fraction(4))]  # a zero-led number after a capitalised word names
    assert values("She has 04 left.") == [("04", Fraction(4))]
    assert values("Half of the 40 pupils left.") == [("Half", Fraction(1, 2)), ("40", Fraction(40))]


def test_a_decade_is_ten_years_unless_a_record_is_compared_over_it():
    assert values("A decade from now he will be 40.") == [("decade", Fraction(10)), ("40", Fraction(40))]
    assert values("The fund had its worst result in a decade.") == []
    assert values("It rained for the first time in a century.") == []


@pytest.mark.parametrize(
    "text, written, value",
    [
        ("A day pass costs 15,50 € here.", "15,50 €", Fraction(31, 2)),
        ("Her fever peaked at 39,2 °C on Monday.", "39,2", Fraction(196, 5)),
        ("The sofa is listed at €1.299,50 in the shop.", "€1.299,50", Fraction(2599, 2)),
        ("It weighs 3,5 kg.", "3,5", Fraction(7, 2)),
        ("It costs $1,500 here.", "$1,500", Fraction(1500)),  # three digits after the comma: thousands
    ],
)
def test_a_decimal_comma_before_a_unit_or_after_a_currency_sign(text, written, value):
    assert values(text) == [(written, value)]


def test_a_pair_with_a_comma_is_its_numbers_not_a_decimal():
    assert values("Plot the point (1,5) now.") == [("1", Fraction(1)), ("5", Fraction(5))]  # as the gold counts a point


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Growth is forecast at 1.2–1.5% next year.", [("1.2", Fraction(12, 1000)), ("1.5%", Fraction(15, 1000))]),
        ("Shares dropped 23p to 412p.", [("23p", Fraction(23)), ("412p", Fraction(412))]),
        ("Unleaded is now 149.9p a litre.", [("149.9p", Fraction(1499, 10))]),
        ("I bought a couple of tickets.", [("couple", Fraction(2))]),
        ("It is most active between pH 6.5 and 7.5.", [("6.5", Fraction(13, 2)), ("7.5", Fraction(15, 2))]),
        ("Stream it in 1080p.", []),  # a video resolution
        ("Error 0x80070005 appeared.", []),
        ("Orwell's Nineteen Eighty-Four was published in June 1949.", []),
        ("Leave at junction 31 for Leeds.", []),
        ("Losses for the half-year narrowed.", []),
        ("The second half was much livelier than the first.", []),
        ("One day I'd like to walk the coast path.", []),
    ],
)
def test_pence_percent_ranges_couples_and_names_in_number_words(text, expected):
    assert values(text) == expected


def test_the_same_words_that_count_stay_quantities():
    assert values("One day has 24 hours.") == [("One", Fraction(1)), ("24", Fraction(24))]
    assert values("He drove the first half of the trip at 70 km per hour and the second half at 85.") == [
        ("half", Fraction(1, 2)),
        ("70", Fraction(70)),
        ("half", Fraction(1, 2)),
        ("85", Fraction(85)),
    ]
    assert values("He ran the first half of the hill. How long did the second half take?") == [
        ("half", Fraction(1, 2)),
        ("half", Fraction(1, 2)),
    ]
    assert values('He said, "Two apples."') == [("Two", Fraction(2))]
    assert values("The cards were marked with the letter A. Half of what was left were marked B.") == [
        ("Half", Fraction(1, 2))
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "Returns came in at -4.5%, against +9.8% a year before.",
            [("-4.5%", Fraction(-9, 200)), ("+9.8%", Fraction(49, 500))],
        ),
        ("Roadworks between junctions 19 and 20 last until spring.", []),
        ("Dial the number and choose option 3.", []),
        ("The server kept returning a 503 error.", []),
        ("Call +44 20 7946 0321 now.", []),
        ("He has 3 rooms and 4 beds.", [("3", Fraction(3)), ("4", Fraction(4))]),
        ("She made 3 errors.", [("3", Fraction(3))]),
    ],
)
def test_a_plus_sign_label_pairs_status_codes_and_country_codes(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "The museum welcomed 2.1m visitors, short of the 2.6m it drew before.",
            [("2.1m", Fraction(2_100_000)), ("2.6m", Fraction(2_600_000))],
        ),
        ("The wall is 2.5m high.", [("2.5", Fraction(5, 2))]),  # metres: no counted noun follows
        ("The parcel went to Flat 4B.", []),
        ("She plays Nocturne No. 2, Op. 9, best.", []),
        ("The Lakers outscored Boston 31-18.", [("31", Fraction(31)), ("18", Fraction(18))]),
        ("Annual membership is CHF 480.", [("CHF 480", Fraction(480))]),
        ("Half-price pizzas every Tuesday.", []),
        ("I'm in two minds about the job.", []),
    ],
)
def test_millions_without_a_currency_sign_flats_works_scores_and_currency_codes(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The band recorded the album in 1971, and track 7 was cut in a single take.", []),
        ("The night bus leaves from stop 26 every 20 minutes.", [("20", Fraction(20))]),
        ("Take bus 14 to the museum.", []),
        ("The patch fixes bug 10432 for 3,000 users.", [("3,000", Fraction(3000))]),
        # a noun after the number: it counts that noun, whatever the word before it
        ("At the first stop 8 people got off the bus.", [("8", Fraction(8))]),
        ("She ran the track 12 times in an hour.", [("12", Fraction(12))]),
        ("Abby is building 2 raised beds.", [("2", Fraction(2))]),
        # a label noun used as a verb: the number counts its object
        ("Ms. Alice can grade 296 papers in 8 hours.", [("296", Fraction(296)), ("8", Fraction(8))]),
        ("A small airplane can seat 10 people in first class.", [("10", Fraction(10))]),
        ("Each row seats 7 or 8 people.", [("7", Fraction(7)), ("8", Fraction(8))]),
        ("Go to gate 12.", []),
        # an adjective between a determiner and the label noun: counted over, as "a room 12 feet wide"
        ("In a low season 4 tuna packs are sold per hour.", [("4", Fraction(4))]),
        ("The shop is open 4 pm to 10p every day.", []),  # p.m., not pence
        ("A stamp costs 10p.", [("10p", Fraction(10))]),
        ("Students in grade 5 classes read.", []),
        ("Ring the surgery after 8.30 on weekdays.", []),
        ("Meet me at 7.45.", []),
        # a price or a measure after a word of time, and minutes off the quarter hours, stay numbers
        ("He sold the cookies at 1.30 each.", [("1.30", Fraction(13, 10))]),
        ("The shop is open until 5.30 and costs 4.30 per hour.", [("4.30", Fraction(43, 10))]),
        ("The bakery sells them at 1.25.", [("1.25", Fraction(5, 4))]),
        ("She's one of a kind.", []),
        ("One of the 5 apples is red.", [("One", Fraction(1)), ("5", Fraction(5))]),
    ],
)
def test_loose_labels_clock_times_with_a_point_and_one_of_a_kind(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Your seat is 42C, on the left-hand side next to the window.", []),
        ("It was 42C in Seville.", [("42", Fraction(42))]),  # a temperature: no label noun before
        # a glued unit at a sentence's end, where the tokenizer keeps the full stop on the number
        ("Bake at 180C.", [("180", Fraction(180))]),
        ("The bag holds 2L.", [("2", Fraction(2))]),
        (
            "A solution with a pH of 3 is ten times more acidic than one with a pH of 4.",
            [("3", Fraction(3)), ("ten", Fraction(10)), ("4", Fraction(4))],
        ),
        ("More than one with a garden was sold.", [("one", Fraction(1))]),
        ("She was on cloud nine after the interview.", []),
        ("He put two and two together.", []),
        ("Kill two birds with one stone.", []),
        ("The cloud was nine miles wide.", [("nine", Fraction(9))]),
    ],
)
def test_seat_codes_glued_units_before_a_full_stop_pronoun_one_and_idioms(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Send it to Apartment 12, 73 Linden Grove, Leeds.", []),
        ("He lives at 14 Park Crescent.", []),
        ("It leaves from stand 9 outside the station.", []),
        ("They stand 9 feet apart.", [("9", Fraction(9))]),
        ("The fly-half kicked six penalties.", [("six", Fraction(6))]),
        # a hyphen after these keeps the number word a number
        ("Win a best-of-three series with a top-ten finish.", [("three", Fraction(3)), ("ten", Fraction(10))]),
        (
            "What is the base-ten number represented by the base-eight number 31?",
            [("ten", Fraction(10)), ("eight", Fraction(8)), ("31", Fraction(31))],
        ),
        (
            "a 2-for-one deal on twenty-one apples",
            [("2", Fraction(2)), ("one", Fraction(1)), ("twenty-one", Fraction(21))],
        ),
        ("The Swiss figure was CHF 1'250'000 for the year.", [("CHF 1'250'000", Fraction(1_250_000))]),
        ("Call +1 (555) 010-2299 now.", []),
    ],
)
def test_street_names_stands_hyphenated_words_swiss_thousands_and_country_codes(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("He ran the 400m hurdles in 47.9 seconds.", [("400", Fraction(400)), ("47.9", Fraction(479, 10))]),
        ("The museum welcomed 2.1m visitors.", [("2.1m", Fraction(2_100_000))]),
        ("Births rose to 3,942, the highest figure for a decade.", [("3,942", Fraction(3942))]),
        ("Growers expect 9,500 tonnes, their smallest crop in a decade.", [("9,500", Fraction(9500))]),
        ("It was the wettest summer in a century.", []),
        ("An honest man worked there for a decade.", [("decade", Fraction(10))]),
        ("Tickets cost $10-$20.", [("$10", Fraction(10)), ("$20", Fraction(20))]),
        (
            "He will end up with $1933-$108 = $1825.",
            [("$1933", Fraction(1933)), ("$108", Fraction(108)), ("$1825", Fraction(1825))],
        ),
        (
            "It will take Alice 25*60= 1500 minutes.",
            [("25", Fraction(25)), ("60", Fraction(60)), ("1500", Fraction(1500))],
        ),
        ("Voyager 2 left in 1977.", []),
        ("Find the distance between (-2,4) and (3,-8).", [("-2", -2), ("4", 4), ("3", 3), ("-8", -8)]),
        ("It weighs 2,5 kg.", [("2,5", Fraction(5, 2))]),
        ("A cube is painted so that one side is blue.", [("one", Fraction(1))]),
        ("She finished fifth in the 2023 Tokyo Marathon.", []),
        ("He lived there for a decade.", [("decade", Fraction(10))]),
        ("Tickets for the 2026 final go on sale.", []),
        ("The 1999 edition sold out.", []),
        # a plural noun or a measure after it: the number counts
        ("The 2000 runners set off.", [("2000", Fraction(2000))]),
        ("They ran the 1500 metre race.", [("1500", Fraction(1500))]),
        ("Whisk 250ml of double cream.", [("250", Fraction(250))]),
        ("She scored double points.", [("double", Fraction(2))]),
    ],
)
def test_races_in_metres_records_for_a_decade_years_before_a_noun_and_kinds_of_cream(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # spaCy's emoticons ("8)", "(-8", "=3", "<3") are a number and its bracket or sign here
        (
            "The vertices are (2, 8) and (8, 8).",
            [("2", Fraction(2)), ("8", Fraction(8)), ("8", Fraction(8)), ("8", Fraction(8))],
        ),
        ("The point (-8, 2) lies on the line.", [("-8", Fraction(-8)), ("2", Fraction(2))]),
        ("If y =3, what is y + 1?", [("3", Fraction(3)), ("1", Fraction(1))]),
        ("Find all n with n <3.", [("3", Fraction(3))]),
        ("We met at 10am.", []),  # a clock time stays one
        ("Toast 50g of flaked almonds.", [("50", Fraction(50))]),
        ("Voyager 2 left the solar system.", []),
        ("That one is mine, and the blue one is yours.", []),
        ("A big one weighs 5 kg.", [("5", Fraction(5))]),
        ("Some lichens grow less than 1mm in a century.", [("1", Fraction(1))]),
        ("A decade from now he will be 30.", [("decade", Fraction(10)), ("30", Fraction(30))]),
        ("How much will he save in a decade?", [("decade", Fraction(10))]),
        # an amount in brackets after a noun restates it; after "of", "to" or a colon it is an accounting negative
        ("He earns minimum wage ($8).", [("$8", Fraction(8))]),
        ("The company reported a loss of ($12.6 million).", [("$12.6 million", Fraction(-12_600_000))]),
    ],
)
def test_emoticons_measures_after_a_capital_pronouns_a_rate_period_and_amounts_in_brackets(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # a calculation glued together with a decimal divisor: each number apart
        (
            "They made 100/.25=400 tacos.",
            [("100", Fraction(100)), (".25", Fraction(1, 4)), ("400", Fraction(400))],
        ),
        ("So 1/2=0.5 of it.", [("1/2", Fraction(1, 2)), ("0.5", Fraction(1, 2))]),  # a fraction stays one
        ("Letters may be used more than once.", [("once", Fraction(1))]),
        ("Each player plays every other exactly once.", [("once", Fraction(1))]),
        ("Once he left, she cried.", []),
        ("He ran once again.", []),
        ("We sat in row 12 for the show.", []),
        ("Plant the seeds in each row 12 inches apart.", [("12", Fraction(12))]),
    ],
)
def test_glued_calculations_with_a_decimal_divisor_once_as_a_count_and_rows(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # a vulgar fraction glued to a percent sign or to a range; a percent range with both signs
        ("The fund returned 7½% after fees.", [("7½%", Fraction(3, 40))]),
        ("It rose ½% today.", [("½%", Fraction(1, 200))]),
        ("It rose 2½-3% today.", [("2½", Fraction(1, 40)), ("3%", Fraction(3, 100))]),
        ("Rates were cut to 4.25%-4.5%.", [("4.25%", Fraction(17, 400)), ("4.5%", Fraction(9, 200))]),
        # "2x" before a comparative, "the" or a rate multiplies; before an operator it is 2 times x, and its
        # coefficient 2 counts as the gold files count every coefficient (quantities_heldout8.md: "3X dollars")
        ("We need 2x more bandwidth.", [("2", Fraction(2))]),
        ("It costs 3x the price.", [("3", Fraction(3))]),
        ("Solve 2x + 3 = 7.", [("2", Fraction(2)), ("3", Fraction(3)), ("7", Fraction(7))]),
        ("He stands 6'2\" tall.", [("6", Fraction(6)), ("2", Fraction(2))]),
        ("The blood pressure was 120/80 mmHg.", [("120", Fraction(120)), ("80", Fraction(80))]),
        ("The pressure rose to 12/25 of its value.", [("12/25", Fraction(12, 25))]),
        ("In the 1990's prices rose.", []),
        ("The movie grossed $1.2 bn worldwide.", [("$1.2 bn", Fraction(1_200_000_000))]),
        ("They sold 1.3m units.", [("1.3m", Fraction(1_300_000))]),
        ("It cruised at Mach 0.85.", [("0.85", Fraction(17, 20))]),
        ("Reviewers give it 4.5/5 stars.", [("4.5", Fraction(9, 2)), ("5", Fraction(5))]),
        ("About 3/4ths of the votes were counted.", [("3/4ths", Fraction(3, 4))]),
        # a whole number "and" a proper fraction before a measure is one mixed number
        ("The scale reads 3 and 1/2 pounds.", [("3 and 1/2", Fraction(7, 2))]),
        ("Find the product of 3 and 1/2.", [("3", Fraction(3)), ("1/2", Fraction(1, 2))]),
    ],
)
def test_glued_fractions_and_percent_ranges_multipliers_heights_pressures_decades_and_abbreviated_scales(
    text, expected
):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Between a third and a half of the crop was lost.", [("third", Fraction(1, 3)), ("half", Fraction(1, 2))]),
        ("It took an hour and a half.", [("hour and a half", Fraction(3, 2))]),
        ("The deal is worth one point two billion euros.", [("one point two billion", Fraction(1_200_000_000))]),
        # a year in words is a date; a count of what a hyphen joins is not
        ("In nineteen ninety five, prices rose.", []),
        ("He was born in nineteen oh five.", []),
        ("We saw nineteen twenty-dollar bills.", [("nineteen", Fraction(19)), ("twenty", Fraction(20))]),
        ("She has nineteen apples and twenty pears.", [("nineteen", Fraction(19)), ("twenty", Fraction(20))]),
        ("The score was nil-nil at half time.", []),
        # digits before a plural ordinal and "of" are a fraction; before a singular scale ordinal after "its", a rank
        ("It takes 3 millionths of a second.", [("3 millionths", Fraction(3, 1_000_000))]),
        ("I have 3 quarters and 2 dimes.", [("3", Fraction(3)), ("2", Fraction(2))]),
        ("The museum welcomed its 10 millionth visitor.", []),
        ("The class of '98 held a reunion.", []),
        ("He said '12 apples' loudly.", [("12", Fraction(12))]),
        ("A 2022 study found it.", []),
        ("A 2000 piece puzzle.", [("2000", Fraction(2000))]),
        ("Flight BA 283 departs at noon.", []),
        ("Shares were priced at HK$18.50 each.", [("HK$18.50", Fraction(37, 2))]),
        ("Earnings came in at 87¢, beating estimates of 81¢.", [("87", Fraction(87)), ("81", Fraction(81))]),
        ("His time was 9.58s, a world record.", [("9.58", Fraction(479, 50))]),
        ("In the 1990s it was popular.", []),
        ("The recipe yields 2 doz. cookies.", [("2 doz", Fraction(24))]),
        ("The deficit widened to ¥1.2tn.", [("1.2", Fraction(1_200_000_000_000))]),
        ("It produced 5tn of steel.", [("5", Fraction(5))]),
        # a number opening a call or a box in plain text
        ("There are C(10, 3) = 120 ways.", [("10", Fraction(10)), ("3", Fraction(3)), ("120", Fraction(120))]),
        ("So f(-3) = 9.", [("-3", Fraction(-3)), ("9", Fraction(9))]),
        ("The car travels \\boxed{220} feet.", [("220", Fraction(220))]),
        ("Serial no. 4471-B was recalled.", []),
        ("About ~40 people came.", [("~40", Fraction(40))]),
        ("A 1:50,000 scale map shows it.", [("1", Fraction(1)), ("50,000", Fraction(50_000))]),
        ("We met at 3:30 on Monday.", []),
        ("Prices start from just £9.99pm.", [("9.99", Fraction(999, 100))]),
        ("It opens at 9pm.", []),
        (
            "Roast at 220°C/200°C fan for 40 mins.",
            [("220", Fraction(220)), ("200", Fraction(200)), ("40", Fraction(40))],
        ),
        ("Bake at 180C/160C fan.", [("180", Fraction(180)), ("160", Fraction(160))]),
        ("Season with ¼-½ tsp chilli flakes.", [("¼", Fraction(1, 4)), ("½", Fraction(1, 2))]),
        ("It is 300 Mbps down/20 Mbps up.", [("300", Fraction(300)), ("20", Fraction(20))]),
        ("The stock jumped tenfold in a decade.", [("tenfold", Fraction(10))]),
        ("The manifold was hot.", []),
        ("It happened in the year two thousand.", []),
        ("The price is 5.000 € in Germany.", [("5.000 €", Fraction(5000))]),
        ("Pi is 3.141 roughly.", [("3.141", Fraction(3141, 1000))]),
        ("I ran 5k this morning.", [("5k", Fraction(5))]),
        ("They run 20K stores.", [("20K", Fraction(20_000))]),
        # a command opening a problem, then its number; a label when a verb follows the number
        ("Round 3.14159 to the nearest hundredth.", [("3.14159", Fraction(314159, 100000))]),
        ("Compute 7! / (5! * 2!).", [("7", Fraction(7)), ("5", Fraction(5)), ("2", Fraction(2))]),
        ("Round 3 was tough.", []),
        ("The war claimed 70–85 million lives.", [("70", Fraction(70_000_000)), ("85 million", Fraction(85_000_000))]),
        ("The 5G network covers 85% of the country.", [("85%", Fraction(17, 20))]),
        ("She works half time.", [("half", Fraction(1, 2))]),
    ],
)
def test_fractions_ranks_years_names_money_and_numbers_in_bare_latex(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("She's read every one of the seven books.", [("seven", Fraction(7))]),
        ("One of the boys came.", [("One", Fraction(1))]),
        ("We'll only stop once for coffee.", [("once", Fraction(1))]),
        ("They visited once a year.", [("once", Fraction(1))]),
        ("Stop once the light turns green.", []),
        ("He sneezes once every 3 seconds.", [("once", Fraction(1)), ("3", Fraction(3))]),
        ("The race finishes once every single car has passed the line.", []),
        # after a phrasal verb's particle too; not where it opens a clause or an idiom
        ("He goes out once a week.", [("once", Fraction(1))]),
        ("The comet comes back once every 76 years.", [("once", Fraction(1)), ("76", Fraction(76))]),
        ("She went out once he left.", []),
        ("They ran out once again.", []),
        ("He once lived in Paris.", []),
        ("The big bottle is cheaper than the 500ml one.", [("500", Fraction(500))]),
        ("He bought the 5 kg one and a 2 kg one.", [("5", Fraction(5)), ("2", Fraction(2))]),
        ("Buy 2 get the 3rd half price.", [("2", Fraction(2)), ("half", Fraction(1, 2))]),
        ("Order 66 was given.", []),
        ("It changes colour in less than one second, using 200 cells.", [("one", Fraction(1)), ("200", Fraction(200))]),
        ("One moment, I'll check.", []),
        ("The dog eats 4 pounds for every one pound she eats.", [("4", Fraction(4)), ("one", Fraction(1))]),
        ("So the answer is \\frac{3}{4} of the total.", [("\\frac{3}{4", Fraction(3, 4))]),
    ],
)
def test_pronoun_ones_once_after_its_verb_and_commands(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Your warranty registration code is 5507-2219; keep this email.", []),
        ("Enter PIN: 4471.", []),
        ("Your order number is 8812 and it ships Monday.", []),
        ("The access code 0451 opens the door.", []),
        # the same nouns before a number that counts what follows it, or with no identifier named
        ("The code is 4 digits long.", [("4", Fraction(4))]),
        ("The password is 8 characters long.", [("8", Fraction(8))]),
        ("The order is 12 pizzas.", [("12", Fraction(12))]),
        ("The number is 5.", [("5", Fraction(5))]),
    ],
)
def test_an_identifiers_value_names(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("It melts above 1,668 °C, which is one reason it is used in jet engines.", [("1,668", Fraction(1668))]),
        ("That's one reason.", []),
        ("One reason why 3 people left is the cold.", [("3", Fraction(3))]),
        ("He had one reason to stay and two to go.", [("one", Fraction(1)), ("two", Fraction(2))]),
    ],
)
def test_one_reason_after_a_copula_is_an_idiom(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Grate 1 tsp of fresh ginger into the dressing.", [("1", Fraction(1))]),
        ("Add 2 tbsp of oil.", [("2", Fraction(2))]),
        ("We are given that one solution to this equation is x=r.", [("one", Fraction(1))]),
        ("Pick a triangle such that one side is 5.", [("one", Fraction(1)), ("5", Fraction(5))]),
        ("I like that one.", []),
        ("That one costs more.", []),
    ],
)
def test_spoon_measures_and_one_after_a_complementizer(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("How many ways can change be made for a quarter using standard U.S. coins?", []),
        ("Tom has a quarter, two dimes and 3 pennies.", [("two", Fraction(2)), ("3", Fraction(3))]),
        ("He spent a quarter of his change.", [("quarter", Fraction(1, 4))]),
        ("She walked a quarter mile to buy 3 coins.", [("quarter", Fraction(1, 4)), ("3", Fraction(3))]),
        ("Eat a quarter of the pie.", [("quarter", Fraction(1, 4))]),
        ("Find the ordered quadruple $(a, b, h, k)$.", []),
        ("Find the ordered triple $(x,y,z)$.", []),
        ("If we triple $x$, we get 12.", [("triple", Fraction(3)), ("12", Fraction(12))]),
        ("The patient in bed 12 on Ward 4 went home this morning.", []),
        ("The bed is 2 meters long.", [("2", Fraction(2))]),
        ("Check in at desk 41 at least two hours before departure.", [("two", Fraction(2))]),
        ("The desk 3 people share is old.", [("3", Fraction(3))]),
        ("Write the job number WO/2291/B on the invoice.", []),
        ("Halve the speed in MPH/2 steps.", [("2", Fraction(2))]),
        ("Catch the 88A from the hospital.", []),
        ("Collect your bags from carousel 4.", []),
        ("It survived tests just above absolute zero.", []),
        ("Her opening triple jump of 14.62 metres won.", [("14.62", Fraction(1462, 100))]),
        ("They walked in one by one.", []),
        ("The ferry leaves from jetty 2.", []),
        ("The last ferry from Jetty 2 leaves at 18:45.", []),
        ("Stop 2 raised beds are here.", [("2", Fraction(2))]),
        ("A poll found that one in five had not voted.", [("one", Fraction(1)), ("five", Fraction(5))]),
        ("I like that one in the window.", []),
        (
            "Find $n$ with \\[ n^2 + 1 \\geq 1,000,000 \\]",
            [("2", Fraction(2)), ("1", Fraction(1)), ("1,000,000", Fraction(10**6))],
        ),
        (
            "A sausage roll is £2.60 and 30p more for the vegan one.",
            [("£2.60", Fraction(13, 5)), ("30p", Fraction(30))],
        ),
        (
            "He gives his sister 120*$0.25 = $30.",
            [("120", Fraction(120)), ("$0.25", Fraction(1, 4)), ("$30", Fraction(30))],
        ),
        ("Draw a one by one square.", [("one", Fraction(1)), ("one", Fraction(1))]),
        ("It took the 9V to power the lamp.", [("9", Fraction(9))]),
        # an item's number in a list opening its line; the same number alone on its line, or inside one, counts
        ("We have 3 cats.\n2. Then we add 4.", [("3", Fraction(3)), ("4", Fraction(4))]),
        ("3. **Transitivity**: if A beats B, A wins.", []),
        ("The total is\n5. ", [("5", Fraction(5))]),
        ("The answer is 3. Then 4 more.", [("3", Fraction(3)), ("4", Fraction(4))]),
        ("Whales hear one another across basins.", []),
    ],
)
def test_coins_tuples_labels_routes_events_and_idioms(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Sound from the 1883 eruption of Krakatoa was heard nearly 4,800 km away.", [("4,800", Fraction(4800))]),
        ("He bought the 1500 piece set.", [("1500", Fraction(1500))]),
        ("The 1250 students went home.", [("1250", Fraction(1250))]),
        ("He's the middle one of five children.", [("five", Fraction(5))]),
        ("He ate the first one of the 3 pies.", [("3", Fraction(3))]),
        ("One of five children is sick.", [("One", Fraction(1)), ("five", Fraction(5))]),
        ("Only one of the 4 cats is black.", [("one", Fraction(1)), ("4", Fraction(4))]),
    ],
)
def test_an_older_year_after_the_and_one_of_them_after_an_adjective(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Chopin finished the Op. 28 preludes in Majorca in 1839.", []),
        ("He played Op. 9 in class.", []),  # the parser ends a sentence at "Op."
        ("He said no. 5 people came.", [("5", Fraction(5))]),
        ("The clinic has moved to 212 Canal Side, Leeds LS11 5PS.", []),
        ("He bought 12 Large Eggs at the shop in Leeds LS11 5PS.", [("12", Fraction(12))]),
    ],
)
def test_a_number_after_a_label_abbreviation_and_a_house_number_before_a_postcode(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("So 3x = 12 and x = 4.", [("3", Fraction(3)), ("12", Fraction(12)), ("4", Fraction(4))]),
        ("She spent 3X dollars on Sunday.", [("3", Fraction(3))]),
        ("Then 2y + 5 = 11.", [("2", Fraction(2)), ("5", Fraction(5)), ("11", Fraction(11))]),
        ("It is 3x faster.", [("3", Fraction(3))]),
        ("He drove a 4x4 truck.", [("4", Fraction(4)), ("4", Fraction(4))]),
    ],
)
def test_a_coefficient_glued_to_its_variable_is_a_number(text, expected):
    assert values(text) == expected


def test_a_long_run_of_glued_arithmetic_is_read_in_linear_time(monkeypatch):
    # each number of "1+1+...+1=5" once; the token reads grow with the run, not with its square (a run of 20,000
    # glued terms took minutes when each number looked back over the whole run)
    from mathgraph.parsers import quantities

    reads = []
    raw = quantities._TokenScanner.raw
    monkeypatch.setattr(quantities._TokenScanner, "raw", lambda self, i: reads.append(i) or raw(self, i))

    def token_reads(terms: int) -> int:
        reads.clear()
        found = values("So " + "1+" * terms + "1=5 and also '12 apples'.")
        assert [text for text, _ in found] == ["1"] * (terms + 1) + ["5", "12"]
        return len(reads)

    assert token_reads(1600) < 5 * token_reads(400)  # 4x the run: about 4x the reads (16x were it quadratic)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Add about a twelfth of a teaspoon of salt.", [("twelfth", Fraction(1, 12))]),
        ("She ate a sixteenth of the pie.", [("sixteenth", Fraction(1, 16))]),
        ("Three twelfths of 36 is 9.", [("Three twelfths", Fraction(1, 4)), ("36", Fraction(36)), ("9", Fraction(9))]),
        ("It was built in the twelfth century.", []),  # a rank
        ("A twelfth century church holds 200 people.", [("200", Fraction(200))]),
    ],
)
def test_fractions_said_with_ordinals_past_a_tenth(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Order 4471-8820-3 was dispatched on Friday.", []),
        ("Your order 2291-33-7 arrives on Friday.", []),
        ("Order 12 pizzas for the 30 guests.", [("12", Fraction(12)), ("30", Fraction(30))]),  # a command: counts
        ("So 100-20-5 leaves 75 apples.", [(n, Fraction(n)) for n in ("100", "20", "5", "75")]),  # a subtraction
        ("My passport, number 533104927, expires in May.", []),
        ("The number 5 is prime and 12 is not.", [("5", Fraction(5)), ("12", Fraction(12))]),
        ("Bus 38 leaves from stand F every 12 minutes.", [("12", Fraction(12))]),
        ("Stop 2 raised beds from drying out.", [("2", Fraction(2))]),  # a command: counts
    ],
)
def test_identifiers_and_labels_that_open_a_sentence_or_follow_a_comma(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Pay the sum of Eight Hundred and Forty Pounds Only.", [("Eight Hundred and Forty", Fraction(840))]),
        ("She paid Forty Dollars and Fifty Cents.", [("Forty", Fraction(40)), ("Fifty", Fraction(50))]),
        ("The Fifty Shades trilogy sold 150 million copies.", [("150 million", Fraction(150_000_000))]),  # a name
    ],
)
def test_an_amount_written_out_in_title_case_before_a_money_word(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("It's six minutes past seven and 3 roads are closed.", [("3", Fraction(3))]),
        ("Ten past six the bell rang for 3 minutes.", [("3", Fraction(3))]),
        ("It was five minutes to six when 4 guests came.", [("4", Fraction(4))]),
        ("Dinner's at half six, bring 4 chairs.", [("4", Fraction(4))]),
        ("The clock on the landing struck eleven.", []),
        # ranges, counts and walks stay numbers
        ("It takes two to ten people.", [("two", Fraction(2)), ("ten", Fraction(10))]),
        ("He walked twenty minutes to school.", [("twenty", Fraction(20))]),
        ("She has ten past papers and 3 pens.", [("ten", Fraction(10)), ("3", Fraction(3))]),
        ("He struck three matches.", [("three", Fraction(3))]),
        ("Add half a cup at half six.", [("half", Fraction(1, 2))]),
    ],
)
def test_a_time_of_day_in_words_is_no_quantity(text, expected):
    assert values(text) == expected


def test_a_long_run_of_title_case_number_words_is_read_in_linear_time(monkeypatch):
    # each word of "One Two One Two ... Pounds" looks ahead for a money word a bounded way, not to the run's end
    from mathgraph.parsers import quantities

    reads = []
    text_of = quantities._TokenScanner.text_of
    monkeypatch.setattr(quantities._TokenScanner, "text_of", lambda self, i: reads.append(i) or text_of(self, i))

    def token_reads(words: int) -> int:
        reads.clear()
        found = values("He said " + "One Two " * (words // 2) + "things.")
        assert found == []  # title-case words beside each other: a name's
        return len(reads)

    assert token_reads(1600) < 5 * token_reads(400)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Fog patches until about nine.", []),
        ("The delayed nine-forty service leaves from platform six in twelve minutes.", [("twelve", Fraction(12))]),
        ("It takes twenty-five minutes.", [("twenty-five", Fraction(25))]),  # no hour and minutes
        ("When we opened in two thousand and eight, a coffee cost 90 pence.", [("90", Fraction(90))]),
        ("Signed on the third day of September, two thousand and twenty-five.", []),
        ("He walked in two thousand steps.", [("two thousand", Fraction(2000))]),  # a count: a noun follows
        ("Sales rose by two thousand and ten.", [("two thousand and ten", Fraction(2010))]),
        ("Go to room four and sit in seat twelve.", []),
        ("Each year three people win.", [("three", Fraction(3))]),
        ("I never once missed a shift.", [("once", Fraction(1))]),
        ("Cheque no. 000417 for 30 euros was returned.", [("30", Fraction(30))]),
        ("He scored 0.5 points.", [("0.5", Fraction(1, 2))]),
        ("Such as 0123456, a 6-digit integer.", [("0123456", Fraction(123456)), ("6", Fraction(6))]),  # one zero
        ("The process is continued until four triangles exist.", [("four", Fraction(4))]),
    ],
)
def test_clock_times_years_and_labels_in_words_and_numbers_with_leading_zeros(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("No deliveries before eight in the morning or after six in the evening.", []),
        ("He woke at 8 in the morning and ran 5 km.", [("5", Fraction(5))]),
        ("The baby slept from 11 till 5, first time in 3 weeks.", [("3", Fraction(3))]),
        ("Count from 1 till 10 apples.", [("1", Fraction(1)), ("10", Fraction(10))]),  # a noun follows: counts
        ("It feeds four to six, depending on the rice.", [("four", Fraction(4)), ("six", Fraction(6))]),  # a range
        ("She sells 12 muffins in the morning and another 4 in the afternoon.", [("12", 12), ("4", 4)]),
        ("Scores went from five to nine, then 3 more.", [("five", 5), ("nine", 9), ("3", 3)]),  # a range
        ("Twenty to ten people came.", [("Twenty", Fraction(20)), ("ten", Fraction(10))]),
        (
            "Bake it at two-twenty, then turn it down to one-ninety for thirty-five minutes.",
            [("two-twenty", Fraction(220)), ("one-ninety", Fraction(190)), ("thirty-five", Fraction(35))],
        ),
        ("Meet at seven-thirty.", []),  # no oven: a time
        ("next one's in 45 mins, want 1?", [("45", Fraction(45)), ("1", Fraction(1))]),
        ("The next one hundred days matter.", [("one hundred", Fraction(100))]),
    ],
)
def test_hours_of_the_day_spans_of_the_clock_oven_settings_and_the_next_one(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The coach left the inn at six sharp, and we changed horses four times.", [("four", Fraction(4))]),
        ("He cut it into six sharp pieces.", [("six", Fraction(6))]),
        ("Board the nine forty-two service to Leeds, formed of six coaches.", [("six", Fraction(6))]),
        ("ARRIVING THURSDAY ON TWO FIFTEEN TRAIN WITH THREE TRUNKS", [("THREE", Fraction(3))]),
        ("He bought two fifteen dollar tickets.", [("two", Fraction(2)), ("fifteen", Fraction(15))]),
        ("She served eleven aces and only two double faults.", [("eleven", Fraction(11)), ("two", Fraction(2))]),
        ("The Lessee may renew this lease once only, for fifteen years.", [("once", 1), ("fifteen", 15)]),
    ],
)
def test_departure_times_sharp_hours_double_faults_and_once_only(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("For fourteen winters, and one night we dug forty-two cars out.", [("fourteen", 14), ("forty-two", 42)]),
        ("She stayed for one night and paid $40.", [("one", Fraction(1)), ("$40", Fraction(40))]),
        ("One day has 24 hours.", [("One", Fraction(1)), ("24", Fraction(24))]),
        ("Delayed 25 mins, I'll be there by 8 latest", [("25", Fraction(25))]),
        ("Finish 8 latest tasks.", [("8", Fraction(8))]),
        ("The flight lands 6.40 at gate 23, we're 4 adults.", [("4", Fraction(4))]),
        ("The price stands at 6.40 today.", [("6.40", Fraction(32, 5))]),
    ],
)
def test_some_night_the_latest_hour_and_a_timetable_time_with_a_point(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Cheque no. 118305 for Eighty-Two Dollars.", [("Eighty-Two", Fraction(82))]),
        ("He said no. 5 people came.", [("5", Fraction(5))]),
        ("The last tram leaves from stop three in ten minutes.", [("ten", Fraction(10))]),
        ("At the first stop three people got off.", [("three", Fraction(3))]),
        ("Run the track three times.", [("three", Fraction(3))]),
    ],
)
def test_a_cheques_number_and_a_number_word_after_a_loose_label(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Clause nineteen is deleted and clause 4 amended.", []),
        ("Each clause 12 words long was cut.", [("12", Fraction(12))]),
        ("Add half a cup of stock, then another quarter cup.", [("half", Fraction(1, 2)), ("quarter", Fraction(1, 4))]),
        ("Then another third set began.", []),
        ("At most 400 kg in any one calendar week.", [("400", Fraction(400)), ("one", Fraction(1))]),
        ("Is any one of them free?", [("one", Fraction(1))]),
        ("Any one can join.", []),
        ("It lay in the drawer for over a century.", []),
        ("A decade from now, Sam will be 30.", [("decade", Fraction(10)), ("30", Fraction(30))]),
    ],
)
def test_a_clause_another_fraction_any_one_and_a_hedged_period(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Sales run between the hours of eleven in the morning and eleven at night.", []),
        ("We open between 9 in the morning and 5 in the evening.", []),
        ("She sold 3 in the morning and 4 in the afternoon.", [("3", Fraction(3)), ("4", Fraction(4))]),
        ("He worked 8 hours in the morning and 3 in the evening.", [("8", Fraction(8)), ("3", Fraction(3))]),
        ("Gonna miss the 8.15 connection, I'll get the 6.40 bus.", []),
        ("Chess club moved to Weds, 7 till 9 in Room 12.", []),
        ("Count, 1 till 10 apples.", [("1", Fraction(1)), ("10", Fraction(10))]),
        ("Lot forty-seven, two Georgian candlesticks.", [("two", Fraction(2))]),
        ("It cost about six and a half thousand.", [("six and a half thousand", Fraction(6500))]),
        ("A surcharge of six point two five per cent applies.", [("six point two five per cent", Fraction(1, 16))]),
        ("He kept the lamp for a quarter of a century.", [("quarter", Fraction(1, 4))]),
    ],
)
def test_hours_of_the_day_in_pairs_departures_shifts_lots_and_amounts_in_words(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We turn every wheel by hand once a fortnight.", [("once", Fraction(1))]),
        ("Once upon a time there were 3 bears.", [("3", Fraction(3))]),
        ("Eighty Pounds only (£80.00), cheque no. 204617.", [("Eighty", Fraction(80)), ("£80.00", Fraction(80))]),
        ("A loss of ($1.2 million) this year.", [("$1.2 million", Fraction(-1200000))]),
        ("Babysitter can do Sat 6 till 11 but wants 12 an hour.", [("12", Fraction(12))]),
        ("He sat 6 till 11.", [("6", Fraction(6)), ("11", Fraction(11))]),
        ("Book club is on Thurs, 7.30, bring 2 chairs.", [("2", Fraction(2))]),
        (
            "She gave 0.64 hundred meals on Friday, 0.30 hundred on Saturday.",
            [("0.64 hundred", 64), ("0.30 hundred", 30)],
        ),
        ("On Monday, 2.45 kg of flour was used.", [("2.45", Fraction(49, 20))]),
    ],
)
def test_once_a_fortnight_a_cheques_restated_amount_and_times_after_a_weekday(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("We met at six o'clock and left at 9 o'clock.", []),
        ("They shut at 6 and it's £1 a minute.", [("£1", Fraction(1))]),
        ("The shop opens at 9 people a day.", [("9", Fraction(9))]),
        ("The counter starts at 5.", [("5", Fraction(5))]),
        ("Can take Alfie Weds at 10, £45 a cut.", [("£45", Fraction(45))]),
        ("Leave it another hour and a quarter.", [("hour and a quarter", Fraction(5, 4))]),
        ("Sear it hot, two twenty for a while, then one seventy.", [("two twenty", 220), ("one seventy", 170)]),
        ("Bake two twenty-minute batches.", [("two", Fraction(2)), ("twenty", Fraction(20))]),
        ("Bake two twenty dollar cakes.", [("two", Fraction(2)), ("twenty", Fraction(20))]),
        ("Collect the dogs from 27 Orchard Rise.", []),
    ],
)
def test_oclock_in_words_opening_hours_an_hour_and_a_quarter_and_oven_settings_with_a_space(text, expected):
    assert values(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("put all 4 boxes out, the lorry comes at like 7", [("4", Fraction(4))]),
        ("there's like two hundred ppl ahead of us and doors are at 7", [("two hundred", Fraction(200))]),
        ("can u get Leo from karate at 5, I'm stuck in a 2 hr meeting", [("2", Fraction(2))]),
        ("I'll grab u at 8.10, leave 25 mins for the roadworks", [("25", Fraction(25))]),
        ("now due at 7.40, so I'll miss about twenty minutes", [("twenty", Fraction(20))]),
        ("We met at about six, and left at 9.", []),
        ("It's twenty-five to nine, and the A14 is down to one lane.", [("one", Fraction(1))]),
        ("The clock had stood at twenty to four for years.", []),
        # not hours: a price, an age, a count's first value, a list, a range, a count before a noun
        ("He sold the pens at 2. Then he bought 3 more.", [("2", Fraction(2)), ("3", Fraction(3))]),
        ("She could read at 5, her mother said, and she was not yet old.", [("5", Fraction(5))]),
        ("At 5, she could read 3 books.", [("5", Fraction(5)), ("3", Fraction(3))]),
        ("The counter starts at 5.", [("5", Fraction(5))]),
        ("A rest stop at 2, 4, 6", [("2", Fraction(2)), ("4", Fraction(4)), ("6", Fraction(6))]),
        ("It's twenty to four people per table.", [("twenty", Fraction(20)), ("four", Fraction(4))]),
        ("The price went from twenty to four.", [("twenty", Fraction(20)), ("four", Fraction(4))]),
        # a span of time restated without its article
        ("leave it somewhere warm for an hour, hour and a half.", [("hour and a half", Fraction(3, 2))]),
        ("Wait two hours or hour and a quarter.", [("two", Fraction(2)), ("hour and a quarter", Fraction(5, 4))]),
        ("He worked, day and night.", []),
        # hours across noon, and an hour after open till
        ("parcel's out for delivery between 10 and 2, can u listen out", []),
        ("Pick a number between 2 and 5.", [("2", Fraction(2)), ("5", Fraction(5))]),
        ("He has between 12 and 3 apples.", [("12", Fraction(12)), ("3", Fraction(3))]),
        ("need anything? co-op's open til 10", []),
        ("Count until 10.", [("10", Fraction(10))]),
        # an hour before a place or a span, a departure to a place, a year in words after a month
        ("drinks at 8 at the usual place x", []),
        ("can u take rex out at 1 for half an hour?", [("half", Fraction(1, 2))]),
        ("They were tied at 3 at the break.", [("3", Fraction(3))]),
        ("the 8.15 to Paddington has been late on nine mornings", [("nine", Fraction(9))]),
        ("She changed the 4.50 to 5.00.", [("4.50", Fraction(9, 2)), ("5.00", Fraction(5))]),
        ("from the first of April two thousand and five, at fifty pounds", [("fifty", Fraction(50))]),
        ("May two thousand people attend?", [("two thousand", Fraction(2000))]),
        # an hour before a habit, a span of the clock after "is", a scale word joined to a measure
        ("I was up at three every morning to light the oven", []),
        ("He reads 3 books at 2 every day.", [("3", Fraction(3))]),
        ("courier says 3 boxes coming, slot is 8 till 12, pls", [("3", Fraction(3))]),
        ("The crew are through the thousand-metre mark.", [("thousand", Fraction(1000))]),
        # once beside twice, one restated in digits
        ("I only ran late twice and hit a deer once.", [("twice", Fraction(2)), ("once", Fraction(1))]),
        ("Once, she went twice.", [("twice", Fraction(2))]),
        (
            "Once upon a time there were 3 bears, and one came twice.",
            [("3", Fraction(3)), ("one", Fraction(1)), ("twice", Fraction(2))],
        ),
        ("to moor one (1) vessel", [("one", Fraction(1)), ("1", Fraction(1))]),
        ("I want that one (1).", [("1", Fraction(1))]),
    ],
)
def test_hours_in_messages_and_speech_departures_to_a_place_years_after_a_month_and_restated_spans(text, expected):
    assert values(text) == expected
