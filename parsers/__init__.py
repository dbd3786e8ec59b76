"""Problem text -> formulas and words -> dependency tree and operator trees -> graph."""

# Bump whenever segment/latex/syntax_graph change the graphs they build (this invalidates every cached graph).
PARSER_VERSION = 57  # 3: U+2212 read as a minus before spaCy (0.3.0); 4, 5: the quantity readers of 0.5.0;
# 6: fullwidth digits and superscript powers, ±, IDs, model names, spaced phone numbers, named years, a range's
# scale word, a currency sign after the amount, one-way, kinds (an ordered triple), 0.\overline{abc}
# 7: bracketed arithmetic (8+(8*2)=24), a power of ten after a signed mantissa or before a full stop, ¾-inch,
# extensions, postcodes, versions and route numbers (Python 3.12, the number 38 bus), counts after a command (Buy 2)
# 8: routes and names before a singular noun (the 73 bus, the Apollo 11 crew), zero-led names (Schalke 04), codes in
# spaced groups, labels (gate 12, Year 9), clock times in words (half past seven), decimal commas (15,50 €)
# 9: pence (23p), a percent sign after a glued range (1.2–1.5%), hex codes, titles in number words (Nineteen
# Eighty-Four), a couple of, One day (some day), the second half (of nothing named), the half-year, pH 6.5
# 10: "the second half" halves what another sentence of the problem names ("the first half of the hill")
# 11: a plus sign before a number (+9.8%), label pairs (junctions 19 and 20), option 3, a 503 error, +44 phone codes
# 12: 2.1m visitors (a million), Flat 4B, No. 2 and Op. 9, a score after a name, currency codes (CHF 480), idioms
# 13: labels when no noun follows (track 7, stop 26, bug 10432), clock times with a point (after 8.30), one of a kind;
# a label noun used as a verb counts (can grade 296 papers, can seat 10 people), in a low season 4 packs, 4 pm to 10p
# 14: a glued unit before a sentence's full stop (Bake at 180C.), a seat said with a verb (seat is 42C), idioms (cloud
# nine, two and two together), one as a pronoun after than (more acidic than one with)
# 15: more street words (73 Linden Grove), stand 9, a word ending in a number word (the fly-half), Swiss thousands
# (1'250'000), a country code before a bracketed area code (+1 (555) 010-2299)
# 16: races in metres (the 400m hurdles), for a decade after a superlative, a year before a noun (the 2026 final),
# kinds of things (double cream)
# 17: no emoticons in the tokenizer ("(2, 8)", "(-8, 2)", "y =3"), a measure after a capitalised word (Toast 50g of),
# the blue one (a pronoun), in a century after an amount (a rate's period), minimum wage ($8) (not a negative)
# 18: a decimal divisor in a glued calculation (100/.25=400), more than once (1), row 12 (a label)
# 19: 7½%, 4.25%-4.5%, ¼-½, 2x more (a multiplier), 6'2" (feet and inches), 120/80 mmHg, 4.5/5, 180C/160C, 3/4ths and
# 1/3rd, 3 and 1/2 pounds, 3 millionths of, the 1990's and the class of '98, a 2022 study, $1.2 bn, ¥1.2tn, 1.3m units,
# 70–85 million, HK$18.50, 87¢, 9.58s, 2 doz., ~40, 5.000 €, £9.99pm, 1:50,000, ran 5k, C(10, 3) and \boxed{220} in
# text, Mach 0.85, tenfold, a third and a half, one point two billion, years in words, at half time, its 10 millionth
# visitor, Flight BA 283, 4471-B, the 5G network, Round 3.14159 to (a command), Round 3 was (a label)
# 20: every one of and the 500ml one (pronouns), stop once for coffee (once after the verb it counts), Buy 2 get (a command)
# 21: in less than one second, (no idiom), \frac{3}{4} in bare LaTeX text, for every one pound (a count)
# 22: an identifier's value (the registration code is 5507-2219, PIN: 4471, your order number is 8812) names
# 23: is one reason, one reason why (an idiom)
# 24: tsp and tbsp measure (Grate 1 tsp), given that one solution (a count after a complementizer)
# 25: the coin in a sentence about coins (change for a quarter), a tuple named by its formula (the ordered
# quadruple $(a, b, h, k)$), bed 12 and cabin 3 as labels
# 26: an older year after the (the 1883 eruption), one of after the and an adjective (the middle one of five)
# 27: a number after No., Op., Vol. wherever the parser ends the sentence (the Op. 28 preludes), a house number
# before a street name, a comma and a postcode (212 Canal Side, Leeds LS11 5PS)
# 28: a coefficient glued to x (3x = 12, 3X dollars), or to y, z, n beside an arithmetic sign (2y + 1)
# 29: a formula in letters written as text with no spaces (x=30*(100/200), 2x+5=15): every literal; a reference
# number after capitals and a slash (WO/2291/B); desk 41
# 30: such a formula needs "=", two letters, a coefficient or the letter x, y, z or n (not C++11, T+5)
# 31: "once" after a phrasal verb's particle counts (goes out once a week, comes up once every 17 years)
# 32: in a formula in letters a unary minus goes with its number (x=-5), a fraction that is not whole is one
# (3/4*X), a label may open it (Total:x+5=9); no unit exponent (5m^2), scale letter (50K+) or x that multiplies
# numbers (20x$1) in one; WO/2291/B needs its second slash (MPH/2 counts)
# 33: a number with a letter that is no unit after "the" and before no noun names a route (the 88A from)
# 34: carousel 4, absolute zero, a triple jump, one by one (not a one by one square), one after another
# 35: a product glued to an amount before a spaced "=" (120*$0.25 = $30), jetty 2, the vegan one
# 36: an item's number opening its line in a list (3. **Transitivity**: ...), one another
# 37: a label capitalised inside a sentence names one whatever word follows (from Jetty 2 leaves at 6)
# 38: a formula's digits grouped by plain commas with a group led by 0 are one number (1,000,000); one in five
# after that or each
# 39: any superlative in -est before 'in a decade' (their smallest crop in a decade), not honest or modest
# 40: money ranges with a sign on both ends ($10-$20), a difference glued to amounts before a spaced '='
# ($1933-$108 = $1825), a step of arithmetic after a name (Alice 25*60= 1500)
# 41: a point or tuple in plain text ((-2,4), (3,-8)), one after so that, a year before a named event (the 2023
# Tokyo Marathon)
# 42: fractions past a tenth (a twelfth of, three twelfths), three digit groups after an order (Order 4471-8820-3),
# an identifier's number after a comma (my passport, number 533104927,), a noun-only label opening a sentence (Bus 38)
# 43: amounts in title-case words before a money word (Eight Hundred and Forty Pounds), clock times in words (six
# minutes past seven, ten past six, at half six, struck eleven)
# 44: more clock times in words (until about nine, the nine-forty service), years said as thousands (in two thousand
# and eight), a number word after a label noun (platform six), never once, a number written with leading zeros (000417)
# 45: hours of a part of the day (eight in the morning) or of a span (from 11 till 5), oven settings in a sentence
# about an oven (two-twenty: 220), next one (a pronoun)
# 46: an hour before sharp (at six sharp), an hour and minutes in words apart before a departure (the nine forty-two
# service), double faults (a kind), once only (a count)
# 47: one night opening a clause (some night), an hour before latest (by 8 latest), an hour with a point after a
# verb of a timetable (lands 6.40)
# 48: a cheque's number after no. (Cheque no. 118305), a number word after a loose label (stop three in), a shift's
# on 7 till 3
# 49: clause as a label noun (Clause nineteen), a fraction word after another (another quarter cup), any one before a
# noun (a count), a hedged period (for over a century: no number of years)
# 50: an hour of the day after between, the hours of, or and after another (eleven in the morning and eleven at
# night), a time with a point before a departure (the 8.15 connection), a shift after a comma (Weds, 7 till 9), Lot and
# a hyphenated number word after a label (Lot forty-seven), and a half thousand (6,500), point ... per cent, a quarter
# of a century (no number of years)
# 51: once a fortnight (a count per span), an amount in parentheses after only (a cheque's restatement, not an
# accounting negative), a time or a shift after a day of the week (Thurs, 7.30; Sat 6 till 11)
# 52: an hour in words before o'clock (six o'clock), an hour after at and a verb of opening or a day of the week
# (they shut at 6, Weds at 10), another hour and a quarter, oven settings said with a space (one seventy) and after
# sear, Rise as a street word (27 Orchard Rise)
# 53: an hour after at (or at like) that closes its clause, any minute with a point (doors at 7, due at 7.40, so),
# minutes to an hour after at or it's (It's twenty-five to nine), a span restated without its article (an hour,
# hour and a half)
# 54: hours across noon after between (between 10 and 2; between 2 and 5 is a range), an hour after open till (the
# co-op's open til 10)
# 55: an hour after at before a place or a span (drinks at 8 at the usual place, at 1 for half an hour), a departure
# named by its time before to and a place (the 8.15 to Paddington), a year in words right after a month (the first of
# April two thousand and five)
# 56: an hour after at before every morning (up at three every morning), a span of the clock after is (slot is 8 till
# 12), a scale word after the joined to a measure (the thousand-metre mark)
# 57: once closing a clause beside twice (hit a deer once), one restated in digits in brackets (moor one (1) vessel)
