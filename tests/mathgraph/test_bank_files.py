"""Banks as they are stored (``mathgraph.bank_files``): JSONL, CSV, Parquet and saved datasets directories read
as the same records with the numbers a person finds them by, from any position, in bounded memory."""

import csv
import json
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mathgraph.bank_files import BankReader, bank_format, check_bank_input, read_bank_rows
from mathgraph.jsonl import JsonlError

ROWS = [
    {"id": "a", "problem": "Find $x$ if $2x+3=7$.", "subject": "Algebra"},
    {"id": "b", "problem": "What is $1+1$?", "subject": "Prealgebra"},
    {"id": "c", "problem": "A line\nthat breaks.", "subject": "Geometry"},
    {"id": "d", "problem": "How many primes are below 10?", "subject": "Number Theory"},
    {"id": "e", "problem": "Compute $\\frac{1}{2}+\\frac{1}{3}$.", "subject": "Algebra"},
]


def write_jsonl(path, rows, blank_after=None):
    lines = []
    for i, row in enumerate(rows):
        lines.append(json.dumps(row))
        if i == blank_after:
            lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_csv(path, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_parquet(path, rows, row_group_size=2):
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=row_group_size)
    return path


def write_dataset(path, rows):
    from datasets import Dataset

    Dataset.from_list(rows).save_to_disk(str(path))
    return path


@pytest.fixture
def banks(tmp_path):
    """The same five rows in each format: ``{format: path}``."""
    return {
        "jsonl": write_jsonl(tmp_path / "bank.jsonl", ROWS, blank_after=1),
        "csv": write_csv(tmp_path / "bank.csv", ROWS),
        "parquet": write_parquet(tmp_path / "bank.parquet", ROWS),
        "datasets": write_dataset(tmp_path / "bank", ROWS),
    }


# where a person finds each row: JSONL lines (a blank line 3 counts), CSV lines (the header is line 1; row c's
# text spans lines 4 and 5), rows of the columnar formats
NUMBERS = {"jsonl": [1, 2, 4, 5, 6], "csv": [2, 3, 4, 6, 7], "parquet": [1, 2, 3, 4, 5], "datasets": [1, 2, 3, 4, 5]}


@pytest.mark.parametrize("kind", sorted(NUMBERS))
def test_every_format_gives_the_same_rows_with_their_numbers(banks, kind):
    assert bank_format(banks[kind]) == kind
    reader = BankReader.open(banks[kind], fields=("problem",))
    records = list(reader.records())
    assert [r.number for r in records] == NUMBERS[kind]
    assert [r.row for r in records] == [{"id": row["id"], "problem": row["problem"]} for row in ROWS]
    everything = BankReader.open(banks[kind], fields=("problem",), keep=None)
    assert [r.row for r in everything.records()] == ROWS


@pytest.mark.parametrize("kind", sorted(NUMBERS))
def test_reading_from_a_position_gives_the_rest(banks, kind):
    reader = BankReader.open(banks[kind], fields=("problem",))
    records = list(reader.records())
    for i, record in enumerate(records):
        assert list(reader.records(record.position)) == records[i:]


def test_the_format_is_given_or_comes_from_the_name(tmp_path, banks):
    plain = write_jsonl(tmp_path / "bank.txt", ROWS[:1])
    assert bank_format(plain) == "jsonl"  # any other name is JSON Lines, as every command read it before
    renamed = tmp_path / "bank.data"
    renamed.write_bytes(banks["csv"].read_bytes())
    records = list(BankReader.open(renamed, format="csv", fields=("problem",)).records())
    assert [r.row["id"] for r in records] == ["a", "b", "c", "d", "e"]
    tsv = tmp_path / "bank.tsv"
    tsv.write_text("id\tproblem\nx\tWhat is $2+2$?\n", encoding="utf-8")
    assert [r.row for r in BankReader.open(tsv, fields=("problem",)).records()] == [
        {"id": "x", "problem": "What is $2+2$?"}
    ]
    with pytest.raises(ValueError, match="unknown input format 'xml'"):
        bank_format(plain, "xml")


def test_bad_records_say_why_with_file_and_number(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_text('{"problem": "ok"}\n{oops\n[1]\n{"problem": ""}\n{"text": "x"}\n', encoding="utf-8")
    reader = BankReader.open(source, fields=("problem",))
    errors = [str(reader.error(r)) for r in reader.records() if r.error]
    assert errors == [
        f"{source}:2: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{source}:3: expected a JSON object, got list",
        f"{source}:4: field 'problem' is empty",
        f"{source}:5: no field 'problem' (fields: text)",
    ]
    table = tmp_path / "bad.csv"
    table.write_text("id,problem\n1,fine\n2,too,many\n3,\n", encoding="utf-8")
    reader = BankReader.open(table, fields=("problem",))
    assert [(r.number, r.error) for r in reader.records()] == [
        (2, None),
        (3, "expected 2 fields (the header's), got 3"),
        (4, "field 'problem' is empty"),
    ]
    nulls = write_parquet(tmp_path / "nulls.parquet", [{"problem": "fine"}, {"problem": None}])
    assert [r.error for r in BankReader.open(nulls, fields=("problem",)).records()] == [
        None,
        "field 'problem' must be a string, got NoneType",
    ]
    with pytest.raises(ValueError, match=r"no column 'question' \(columns: problem\)"):
        list(BankReader.open(nulls, fields=("question",)).records())
    quote = tmp_path / "quote.csv"
    quote.write_text('problem\n"never closed\n', encoding="utf-8")
    with pytest.raises(JsonlError, match="quote.csv:2: not valid CSV"):
        list(BankReader.open(quote, fields=("problem",)).records())


def test_a_check_rejects_rows_and_any_field_may_be_the_id(tmp_path):
    source = write_jsonl(tmp_path / "bank.jsonl", [{"key": 1, "problem": "x"}, {"key": 2, "problem": "y"}])

    def check(row):
        if row["key"] == 2:
            raise ValueError("key 2 is not allowed")

    records = list(BankReader.open(source, fields=("problem",), id_field="key", check=check).records())
    assert [(r.row, r.error) for r in records] == [({"problem": "x", "key": 1}, None), (None, "key 2 is not allowed")]


def test_a_dataset_dict_asks_for_a_split(tmp_path):
    from datasets import Dataset, DatasetDict

    DatasetDict({"train": Dataset.from_list(ROWS[:2]), "test": Dataset.from_list(ROWS[2:])}).save_to_disk(
        str(tmp_path / "splits")
    )
    with pytest.raises(ValueError, match=r"holds the splits train, test of a DatasetDict: give one, .*/splits/SPLIT"):
        list(BankReader.open(tmp_path / "splits", fields=("problem",)).records())
    split = BankReader.open(tmp_path / "splits" / "test", fields=("problem",))
    assert [r.row["id"] for r in split.records()] == ["c", "d", "e"]


def test_inputs_that_are_not_there_or_hold_nothing_fail_fast(tmp_path, banks):
    (tmp_path / "empty.jsonl").write_text("\n \n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    cases = [
        (tmp_path / "missing.csv", FileNotFoundError, "--input {p}: no such file"),
        (tmp_path / "empty.jsonl", ValueError, "--input {p} is empty: no input lines"),
        (tmp_path / "folder", IsADirectoryError, "--input {p} is a directory, not a file"),
    ]
    for path, error, message in cases:
        with pytest.raises(error) as raised:
            check_bank_input(path)
        assert message.format(p=path) in str(raised.value)
    for path in banks.values():
        check_bank_input(path)  # passes


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_reading_streams_in_bounded_memory(tmp_path, kind):
    """20,000 rows of ~1 KB (about 20 MB): the reader holds a block of rows at a time, not the bank."""
    rows = [{"id": i, "problem": f"Problem {i}: " + "x" * 1000} for i in range(20_000)]
    path = write_jsonl(tmp_path / "big.jsonl", rows) if kind == "jsonl" else tmp_path / "big.parquet"
    if kind == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=2_000)
    del rows
    reader = BankReader.open(path, fields=("problem",))
    tracemalloc.start()
    count = sum(1 for record in reader.records() if record.error is None)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert count == 20_000
    assert peak < 5_000_000, f"peak {peak / 1e6:.1f} MB while reading a 20 MB bank"


@pytest.mark.parametrize("kind", sorted(NUMBERS))
def test_a_small_bank_is_read_whole_with_every_column(banks, kind):
    rows, bad = read_bank_rows(banks[kind], ("problem",))
    assert bad == [] and [number for number, _ in rows] == NUMBERS[kind]
    assert [row for _, row in rows] == ROWS  # id and subject too: compare and check copy the id


def test_read_bank_rows_raises_or_skips_a_bad_row(tmp_path):
    rows = [{"id": 1, "problem": "Find $x$."}, {"id": 2, "problem": ""}, {"id": 3, "problem": "What is 2+2?"}]
    bank = write_csv(tmp_path / "bad.csv", rows)
    with pytest.raises(JsonlError, match=r"bad\.csv:3: field 'problem' is empty"):
        read_bank_rows(bank, ("problem",))
    rows, bad = read_bank_rows(bank, ("problem",), skip_bad=True)
    assert [number for number, _ in rows] == [2, 4] and [error.line for error in bad] == [3]


def test_a_csv_row_of_empty_fields_is_reported_not_skipped(tmp_path):
    """A blank line is no record, but a row whose fields are empty (``""``, or ``,,``) is a bad one."""
    one_column = write_csv(tmp_path / "one.csv", [{"problem": "Find $x$."}, {"problem": ""}])
    with pytest.raises(JsonlError, match=r"one\.csv:3: field 'problem' is empty"):
        read_bank_rows(one_column, ("problem",))
    two_columns = tmp_path / "two.csv"
    two_columns.write_text("id,problem\na,Find $x$.\n\n   \n,\n", encoding="utf-8")
    rows, bad = read_bank_rows(two_columns, ("problem",), skip_bad=True)
    assert [number for number, _ in rows] == [2] and [error.line for error in bad] == [5]
