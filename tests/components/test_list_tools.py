"""List and retrieve tools: schemas, the filter/ordering/pagination pipeline, SQLAlchemy."""

from __future__ import annotations

import dataclasses
import datetime
import math
import re
import typing as t

import jsonschema
import marshmallow as ma
import pytest
import sqlalchemy as sa
from flask import Flask
from sqlalchemy import orm

from flask_mcp import MCP, Context, NotFoundError
from flask_mcp.components.list_tools import build_list_tool, build_retrieve_tool
from flask_mcp.testing import MCPTestClient


class Invoice(ma.Schema):
    number = ma.fields.Integer(required=True)
    status = ma.fields.String(required=True)
    amount = ma.fields.Integer(allow_none=True)


@dataclasses.dataclass
class InvoiceRow:
    number: int
    status: str
    amount: int | None
    secret: str = "hidden"


ROWS = [
    InvoiceRow(1, "open", 30),
    InvoiceRow(2, "paid", 10),
    InvoiceRow(3, "open", None),
    InvoiceRow(4, "open", 50),
    InvoiceRow(5, "paid", 20),
    InvoiceRow(6, "open", 40),
]

Factory = t.Callable[[MCP], MCPTestClient]


@pytest.fixture
def serve(make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]) -> Factory:
    def factory(extension: MCP) -> MCPTestClient:
        client = make_client(make_app(extension, MCP_STATELESS=True))
        client.initialize()
        return client

    return factory


def descriptor(client: MCPTestClient, name: str) -> dict[str, t.Any]:
    return next(tool for tool in client.list_tools() if tool["name"] == name)


def call(client: MCPTestClient, name: str, arguments: dict[str, t.Any] | None = None) -> dict[str, t.Any]:
    """Call a tool that must succeed; its structured content must fit its advertised outputSchema."""
    result = client.call_tool(name, arguments)
    assert not result.get("isError"), result
    jsonschema.validate(result["structuredContent"], descriptor(client, name)["outputSchema"])
    return t.cast(dict[str, t.Any], result["structuredContent"])


def numbers(items: list[dict[str, t.Any]]) -> list[int]:
    return [item["number"] for item in items]


@pytest.fixture
def invoices(mcp: MCP, serve: Factory) -> MCPTestClient:
    @mcp.list_tool(
        item_schema=Invoice,
        filter_fields=["status"],
        ordering_fields=["amount", "number"],
        paginate=True,
        max_limit=4,
        default_limit=2,
    )
    def list_invoices(ctx: Context, as_dicts: bool = False) -> list[t.Any]:
        """Invoices, newest first."""
        assert isinstance(ctx, Context)  # injection survives the wrapper
        return [dataclasses.asdict(row) for row in ROWS] if as_dicts else list(ROWS)

    @mcp.list_tool(item_schema=Invoice, ordering_fields=["number"])
    def all_invoices() -> t.Iterator[InvoiceRow]:
        return iter(ROWS)

    return serve(mcp)


def test_list_tool_schemas(invoices: MCPTestClient) -> None:
    paged = descriptor(invoices, "list_invoices")
    assert paged["description"] == "Invoices, newest first."
    inputs = paged["inputSchema"]["properties"]
    assert set(inputs) == {"as_dicts", "status", "ordering", "page", "limit"}
    assert inputs["status"]["type"] == "string"
    assert inputs["ordering"]["enum"] == ["amount", "-amount", "number", "-number"]
    assert (inputs["page"]["default"], inputs["limit"]["default"]) == (1, 2)
    assert "maximum" not in inputs["limit"]  # too-large limits are clamped, not refused
    output = paged["outputSchema"]
    assert sorted(output["required"]) == ["hasNext", "items", "page", "totalPages"]
    assert output["properties"]["items"]["type"] == "array"
    assert set(output["$defs"]["Invoice"]["properties"]) == {"number", "status", "amount"}

    plain = descriptor(invoices, "all_invoices")
    assert set(plain["inputSchema"]["properties"]) == {"ordering"}
    assert plain["outputSchema"]["required"] == ["result"]
    assert plain["outputSchema"]["properties"]["result"]["type"] == "array"


@pytest.mark.parametrize("as_dicts", [False, True])
def test_filter_and_order(invoices: MCPTestClient, as_dicts: bool) -> None:
    arguments = {"as_dicts": as_dicts, "status": "open", "limit": 4}
    ascending = call(invoices, "list_invoices", {**arguments, "ordering": "amount"})["items"]
    descending = call(invoices, "list_invoices", {**arguments, "ordering": "-amount"})["items"]
    open_rows = [row for row in ROWS if row.status == "open"]
    known = sorted((row for row in open_rows if row.amount is not None), key=lambda row: t.cast(int, row.amount))
    unknown = [row.number for row in open_rows if row.amount is None]
    assert numbers(ascending) == [row.number for row in known] + unknown
    assert numbers(descending) == [row.number for row in reversed(known)] + unknown  # None last both ways
    assert all(set(item) == {"number", "status", "amount"} for item in ascending)  # dumped by the item schema


def test_pagination(invoices: MCPTestClient) -> None:
    pages = math.ceil(len(ROWS) / 2)
    first = call(invoices, "list_invoices", {"ordering": "number"})
    assert first == {"items": first["items"], "page": 1, "totalPages": pages, "hasNext": True}
    assert numbers(first["items"]) == [row.number for row in ROWS[:2]]
    last = call(invoices, "list_invoices", {"ordering": "number", "page": pages})
    assert (numbers(last["items"]), last["hasNext"]) == ([row.number for row in ROWS[-2:]], False)
    beyond = call(invoices, "list_invoices", {"page": pages + 5})
    assert (beyond["items"], beyond["page"], beyond["hasNext"]) == ([], pages + 5, False)
    clamped = call(invoices, "list_invoices", {"ordering": "number", "limit": 1000})
    assert numbers(clamped["items"]) == [row.number for row in ROWS[:4]]
    assert clamped["totalPages"] == math.ceil(len(ROWS) / 4)
    empty = call(invoices, "list_invoices", {"status": "void"})
    assert (empty["items"], empty["totalPages"], empty["hasNext"]) == ([], 1, False)


def test_pipeline_arguments_are_validated(invoices: MCPTestClient) -> None:
    for arguments in ({"page": 0}, {"limit": 0}, {"ordering": "secret"}, {"status": 3}):
        result = invoices.call_tool("list_invoices", arguments)
        assert result["isError"], arguments
        assert next(iter(arguments)) in result["content"][0]["text"]


def test_unpaginated_list_wraps_the_items(invoices: MCPTestClient) -> None:
    result = call(invoices, "all_invoices", {"ordering": "-number"})
    assert numbers(result["result"]) == sorted((row.number for row in ROWS), reverse=True)


@pytest.fixture
def retrieval(mcp: MCP, serve: Factory) -> MCPTestClient:
    @mcp.retrieve_tool(item_schema=Invoice)
    def get_invoice(number: int) -> InvoiceRow | None:
        """One invoice."""
        return next((row for row in ROWS if row.number == number), None)

    @mcp.retrieve_tool(item_schema=Invoice, allow_none=True, name="find_invoice")
    async def find(number: int) -> dict[str, t.Any] | None:
        return next((dataclasses.asdict(row) for row in ROWS if row.number == number), None)

    return serve(mcp)


def test_retrieve_schemas(retrieval: MCPTestClient) -> None:
    strict = descriptor(retrieval, "get_invoice")
    assert strict["inputSchema"]["required"] == ["number"]
    assert set(strict["outputSchema"]["properties"]) == {"number", "status", "amount"}
    nullable = descriptor(retrieval, "find_invoice")["outputSchema"]
    assert nullable["required"] == ["result"]
    jsonschema.validate({"result": None}, nullable)


def test_retrieve(retrieval: MCPTestClient) -> None:
    row = ROWS[2]
    assert call(retrieval, "get_invoice", {"number": row.number}) == {
        "number": row.number,
        "status": row.status,
        "amount": row.amount,
    }
    missing = retrieval.call_tool("get_invoice", {"number": 999})
    assert missing["isError"] and "not found" in missing["content"][0]["text"]
    assert "structuredContent" not in missing
    assert call(retrieval, "find_invoice", {"number": row.number})["result"]["number"] == row.number
    assert call(retrieval, "find_invoice", {"number": 999}) == {"result": None}


def test_not_found_is_the_not_found_error() -> None:
    tool = build_retrieve_tool(lambda: None, name="nothing", item_schema=Invoice)
    with pytest.raises(NotFoundError):
        tool.func()


def test_registration_errors() -> None:
    def listing(page: int = 1) -> list[t.Any]:
        return []

    with pytest.raises(ValueError, match="filter_fields not in the item schema: colour"):
        build_list_tool(lambda: [], name="x", item_schema=Invoice, filter_fields=["colour"])
    with pytest.raises(ValueError, match="ordering_fields not in the item schema: secret"):
        build_list_tool(lambda: [], name="x", item_schema=Invoice, ordering_fields=["secret"])
    with pytest.raises(ValueError, match="page"):
        build_list_tool(listing, item_schema=Invoice, paginate=True)
    with pytest.raises(ValueError, match="status"):
        build_list_tool(lambda status: [], name="x", item_schema=Invoice, filter_fields=["status"])
    with pytest.raises(ValueError, match="default_limit"):
        build_list_tool(lambda: [], name="x", item_schema=Invoice, paginate=True, default_limit=50, max_limit=10)
    with pytest.raises(TypeError, match="filter_fields, paginate only apply to list tools"):
        build_retrieve_tool(lambda: None, name="x", item_schema=Invoice, filter_fields=["status"], paginate=True)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="bundle"):
        build_list_tool(lambda data: [], name="x", item_schema=Invoice, argument_binding="bundle")
    with pytest.raises(TypeError, match="output_schema"):
        build_list_tool(lambda: [], name="x", item_schema=Invoice, output_schema=Invoice)
    # Without a clash, a parameter named like an unused key is the function's own.
    assert "page" in build_list_tool(listing, item_schema=Invoice).descriptor["inputSchema"]["properties"]


def test_raw_json_input_schema_gains_the_pipeline_keys() -> None:
    seen: dict[str, t.Any] = {}

    def search(**arguments: t.Any) -> list[InvoiceRow]:
        seen.update(arguments)
        return ROWS

    raw = {"type": "object", "properties": {"query": {"type": "string"}}}
    tool = build_list_tool(search, item_schema=Invoice, input_schema=raw, paginate=True, default_limit=3)
    assert set(tool.descriptor["inputSchema"]["properties"]) == {"query", "page", "limit"}
    kwargs = tool.load_arguments({"query": "x", "limit": 2})
    page = tool.func(**kwargs)
    assert seen == {"query": "x"}
    assert (len(page["items"]), page["page"], page["hasNext"]) == (2, 1, True)


def test_a_pydantic_model_as_input_schema_names_and_checks_the_own_arguments() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Search(pydantic.BaseModel):
        status: str
        min_total: int = pydantic.Field(default=0, ge=0)

    seen: dict[str, t.Any] = {}

    def search(status: str, min_total: int = 0) -> list[InvoiceRow]:
        # Checked like a JSON Schema input_schema: defaults are the function's own.
        seen.update(status=status, min_total=min_total)
        return ROWS

    tool = build_list_tool(search, item_schema=Invoice, input_schema=Search, paginate=True)
    properties = tool.descriptor["inputSchema"]["properties"]
    assert set(properties) == {"status", "min_total", "page", "limit"}
    assert properties["min_total"]["minimum"] == 0
    tool.func(**tool.load_arguments({"status": "paid", "limit": 1}))
    assert seen == {"status": "paid", "min_total": 0}
    with pytest.raises(ma.ValidationError) as raised:
        tool.load_arguments({"status": "paid", "min_total": -1})
    assert "min_total" in raised.value.messages


def test_a_list_tool_must_return_a_collection() -> None:
    tool = build_list_tool(lambda: {"number": 1}, name="x", item_schema=Invoice)
    with pytest.raises(TypeError, match="must return a collection"):
        tool.func()


def test_sqlalchemy(mcp: MCP, serve: Factory) -> None:
    class Base(orm.DeclarativeBase):
        pass

    class Record(Base):
        __tablename__ = "invoice"
        # No Mapped[...] annotations: they would be strings resolved in the module, without ``orm``.
        number = orm.mapped_column(sa.Integer, primary_key=True)
        status = orm.mapped_column(sa.String, nullable=False)
        # The attribute name differs from the column's: filters and ordering use the attribute.
        amount = orm.mapped_column("amount_cents", sa.Integer, nullable=True)

    engine = sa.create_engine("sqlite://")
    Base.metadata.create_all(engine)
    make_session = orm.sessionmaker(engine)
    with make_session.begin() as session:
        session.add_all(Record(number=row.number, status=row.status, amount=row.amount) for row in ROWS)

    @mcp.list_tool(
        item_schema=Invoice,
        filter_fields=["status"],
        ordering_fields=["number", "amount"],
        paginate=True,
        default_limit=2,
        session=make_session,
    )
    def records(minimum: int = 0) -> t.Any:
        return sa.select(Record).where(Record.number >= minimum)

    @mcp.list_tool(item_schema=Invoice, ordering_fields=["number"], session=make_session)
    def columns() -> t.Any:
        return sa.select(Record.number, Record.status, Record.amount)

    @mcp.retrieve_tool(item_schema=Invoice, session=make_session)
    def record(number: int) -> t.Any:
        return sa.select(Record).where(Record.number == number)

    with make_session() as legacy:

        @mcp.list_tool(item_schema=Invoice, filter_fields=["status"], ordering_fields=["number"], paginate=True)
        def legacy_records() -> t.Any:
            return legacy.query(Record)

        @mcp.retrieve_tool(item_schema=Invoice, allow_none=True)
        def legacy_record(number: int) -> t.Any:
            return legacy.query(Record).filter_by(number=number)

        @mcp.retrieve_tool(item_schema=Invoice)
        def sessionless(number: int) -> t.Any:
            return sa.select(Record).where(Record.number == number)

        client = serve(mcp)
        open_numbers = sorted((row.number for row in ROWS if row.status == "open"), reverse=True)
        first = call(client, "records", {"status": "open", "ordering": "-number"})
        assert first == {"items": first["items"], "page": 1, "totalPages": 2, "hasNext": True}
        assert numbers(first["items"]) == open_numbers[:2]
        second = call(client, "records", {"status": "open", "ordering": "-number", "page": 2})
        assert (numbers(second["items"]), second["hasNext"]) == (open_numbers[2:4], False)
        by_amount = call(client, "records", {"minimum": 2, "ordering": "-amount", "limit": 10})["items"]
        amounts = [item["amount"] for item in by_amount]
        assert amounts == [*sorted((row.amount for row in ROWS[1:] if row.amount is not None), reverse=True), None]
        pages = math.ceil(len(ROWS) / 2)
        assert call(client, "records", {"page": 9}) == {"items": [], "page": 9, "totalPages": pages, "hasNext": False}
        assert numbers(call(client, "columns", {"ordering": "-number"})["result"]) == [row.number for row in ROWS][::-1]

        assert call(client, "record", {"number": 4})["amount"] == ROWS[3].amount
        assert client.call_tool("record", {"number": 99})["isError"]

        legacy_page = call(client, "legacy_records", {"status": "paid", "ordering": "-number"})
        paid = sorted((row.number for row in ROWS if row.status == "paid"), reverse=True)
        assert (numbers(legacy_page["items"]), legacy_page["totalPages"]) == (paid, 1)
        assert call(client, "legacy_record", {"number": 2})["result"]["status"] == ROWS[1].status
        assert call(client, "legacy_record", {"number": 99}) == {"result": None}

        unconfigured = client.call_tool("sessionless", {"number": 1})
        assert unconfigured["isError"] and "no session to run it" in unconfigured["content"][0]["text"]


# -- lookups: the same answers from a list, dicts, a Select and a legacy Query ------------------


class Entry(ma.Schema):
    number = ma.fields.Integer(required=True)
    title = ma.fields.String(allow_none=True)
    # Renamed on the wire: the lookups' arguments keep the suffix (amountCents__gte).
    amount = ma.fields.Integer(allow_none=True, data_key="amountCents", validate=ma.validate.Range(min=0))
    day = ma.fields.Date(required=True)
    flagged = ma.fields.Boolean(required=True)


@dataclasses.dataclass
class EntryRow:
    number: int
    title: str | None
    amount: int | None
    day: datetime.date
    flagged: bool


ENTRIES = [
    EntryRow(1, "Buy milk", 30, datetime.date(2024, 1, 5), False),
    EntryRow(2, "buy MILK again", 10, datetime.date(2024, 2, 1), True),
    EntryRow(3, "100% done", None, datetime.date(2024, 3, 1), False),
    EntryRow(4, "snake_case name", 50, datetime.date(2024, 1, 20), True),
    EntryRow(5, "glob * and ? and [x]", 20, datetime.date(2024, 2, 15), False),
    EntryRow(6, None, 40, datetime.date(2024, 3, 10), False),
    EntryRow(7, "1000 items", 0, datetime.date(2023, 12, 31), True),
]

ENTRY_FILTERS = {
    "number": ["in"],
    "title": ["exact", "contains", "icontains", "startswith", "istartswith", "endswith", "iendswith", "isnull"],
    "amount": ["gt", "gte", "lt", "lte", "isnull", "in"],
    "day": ["gte", "lt"],
    "flagged": ["exact"],
}


class Base(orm.DeclarativeBase):
    pass


class EntryRecord(Base):
    __tablename__ = "entry"
    # No Mapped[...] annotations: they would be strings resolved in the module, without ``orm``.
    number = orm.mapped_column(sa.Integer, primary_key=True)
    title = orm.mapped_column(sa.String, nullable=True)
    amount = orm.mapped_column("amount_cents", sa.Integer, nullable=True)
    day = orm.mapped_column(sa.Date, nullable=False)
    flagged = orm.mapped_column(sa.Boolean, nullable=False)


@pytest.fixture
def engine() -> t.Iterator[sa.Engine]:
    # One connection for every thread, so the in-memory database is the same wherever the tool runs.
    engine = sa.create_engine("sqlite://", poolclass=sa.StaticPool, connect_args={"check_same_thread": False})
    Base.metadata.create_all(engine)
    with orm.Session(engine) as session, session.begin():
        session.add_all(EntryRecord(**dataclasses.asdict(row)) for row in ENTRIES)
    yield engine
    engine.dispose()


BACKENDS = ["objects", "dicts", "select", "query", "transaction"]


@pytest.fixture(params=BACKENDS)
def entries(request: pytest.FixtureRequest, engine: sa.Engine, mcp: MCP, serve: Factory) -> t.Iterator[MCPTestClient]:
    """A list tool ``entries`` over :data:`ENTRIES`, as Python objects, dicts or SQL."""
    backend = request.param
    make_session = orm.sessionmaker(engine)
    options: dict[str, t.Any] = {"item_schema": Entry, "filter_fields": ENTRY_FILTERS, "ordering_fields": ["number"]}
    with make_session() as legacy:
        if backend == "transaction":
            # No session=: the extension's transaction runs the Select.
            mcp = MCP(name="tx", transaction=orm.scoped_session(make_session))
        elif backend == "select":
            options["session"] = make_session

        @mcp.list_tool(paginate=True, default_limit=3, **options)
        def entries() -> t.Any:
            if backend == "objects":
                return ENTRIES
            if backend == "dicts":
                return [dataclasses.asdict(row) for row in ENTRIES]
            if backend == "query":
                return legacy.query(EntryRecord)
            return sa.select(EntryRecord)

        yield serve(mcp)


def listed(client: MCPTestClient, arguments: dict[str, t.Any]) -> list[int]:
    """The numbers of every entry the filters keep, page after page."""
    found: list[int] = []
    for page in range(1, len(ENTRIES) + 2):
        result = call(client, "entries", {**arguments, "ordering": "number", "page": page})
        found += numbers(result["items"])
        if not result["hasNext"]:
            assert result["totalPages"] == max(1, math.ceil(len(found) / 3))  # the count is filtered too
            return found
    raise AssertionError("more pages than entries")


def has(text: str | None, test: t.Callable[[str], bool]) -> bool:
    return text is not None and test(text)


LOOKUP_CASES: list[tuple[dict[str, t.Any], t.Callable[[EntryRow], bool]]] = [
    ({"title__contains": "milk"}, lambda r: has(r.title, lambda s: "milk" in s)),
    ({"title__icontains": "milk"}, lambda r: has(r.title, lambda s: "milk" in s.lower())),
    # LIKE wildcards and GLOB ones are literal characters in the caller's text.
    ({"title__contains": "%"}, lambda r: has(r.title, lambda s: "%" in s)),
    ({"title__contains": "_"}, lambda r: has(r.title, lambda s: "_" in s)),
    ({"title__icontains": "K_A"}, lambda r: has(r.title, lambda s: "k_a" in s.lower())),
    ({"title__istartswith": "100%"}, lambda r: has(r.title, lambda s: s.lower().startswith("100%"))),
    ({"title__contains": "*"}, lambda r: has(r.title, lambda s: "*" in s)),
    ({"title__contains": "? and [x]"}, lambda r: has(r.title, lambda s: "? and [x]" in s)),
    ({"title__contains": ""}, lambda r: r.title is not None),
    ({"title__startswith": "buy"}, lambda r: has(r.title, lambda s: s.startswith("buy"))),
    ({"title__istartswith": "BUY"}, lambda r: has(r.title, lambda s: s.lower().startswith("buy"))),
    ({"title__startswith": "100%"}, lambda r: has(r.title, lambda s: s.startswith("100%"))),
    ({"title__endswith": "again"}, lambda r: has(r.title, lambda s: s.endswith("again"))),
    ({"title__iendswith": "NAME"}, lambda r: has(r.title, lambda s: s.lower().endswith("name"))),
    ({"title": None}, lambda r: r.title is None),
    ({"title__isnull": True}, lambda r: r.title is None),
    ({"title__isnull": False}, lambda r: r.title is not None),
    ({"amountCents__isnull": True}, lambda r: r.amount is None),
    ({"number__in": [2, 4, 99]}, lambda r: r.number in (2, 4, 99)),
    ({"number__in": []}, lambda r: False),
    ({"amountCents__in": [0, 40]}, lambda r: r.amount in (0, 40)),
    ({"amountCents__gte": 20}, lambda r: r.amount is not None and r.amount >= 20),
    ({"amountCents__lt": 20}, lambda r: r.amount is not None and r.amount < 20),
    ({"amountCents__gt": 20, "amountCents__lte": 40}, lambda r: r.amount is not None and 20 < r.amount <= 40),
    (
        {"day__gte": "2024-02-01", "day__lt": "2024-03-01"},
        lambda r: datetime.date(2024, 2, 1) <= r.day < datetime.date(2024, 3, 1),
    ),
    ({"flagged": True, "title__icontains": "m"}, lambda r: r.flagged and has(r.title, lambda s: "m" in s.lower())),
]


@pytest.mark.parametrize(("arguments", "keep"), LOOKUP_CASES, ids=[str(case[0]) for case in LOOKUP_CASES])
def test_lookups(entries: MCPTestClient, arguments: dict[str, t.Any], keep: t.Callable[[EntryRow], bool]) -> None:
    expected = [row.number for row in ENTRIES if keep(row)]
    assert listed(entries, arguments) == expected


def test_lookup_arguments_are_typed(mcp: MCP, serve: Factory) -> None:
    @mcp.list_tool(item_schema=Entry, filter_fields=ENTRY_FILTERS)
    def entries() -> list[EntryRow]:
        return ENTRIES

    inputs = descriptor(serve(mcp), "entries")["inputSchema"]["properties"]
    assert inputs["title__icontains"]["type"] == "string"
    assert inputs["number__in"]["type"] == "array" and inputs["number__in"]["items"]["type"] == "integer"
    assert inputs["amountCents__in"]["items"]["minimum"] == 0  # the values' validators hold
    assert inputs["amountCents__gte"]["type"] == "integer" and "minimum" not in inputs["amountCents__gte"]
    assert (inputs["day__lt"]["type"], inputs["day__lt"]["format"]) == ("string", "date")
    assert inputs["title__isnull"]["type"] == "boolean" and inputs["flagged"]["type"] == "boolean"
    assert {"type": "null"} in inputs["title"]["anyOf"] and inputs["amountCents__lte"]["type"] == "integer"
    assert "contains this text" in inputs["title__contains"]["description"]
    # The list form declares the same arguments as the mapping form.
    names = [
        field if lookup == "exact" else f"{field}__{lookup}" for field, ls in ENTRY_FILTERS.items() for lookup in ls
    ]
    by_name = build_list_tool(lambda: [], name="entries", item_schema=Entry, filter_fields=names)
    assert (
        by_name.descriptor["inputSchema"]["properties"]
        == descriptor(serve(mcp), "entries")["inputSchema"]["properties"]
    )


@pytest.mark.parametrize(
    "arguments",
    [
        {"number__in": [1, None]},
        {"number__in": 1},
        {"title__contains": 3},
        {"title__isnull": "yes"},
        {"amountCents__gte": None},
        {"day__lt": "yesterday"},
    ],
)
def test_lookup_arguments_are_validated(mcp: MCP, serve: Factory, arguments: dict[str, t.Any]) -> None:
    @mcp.list_tool(item_schema=Entry, filter_fields=ENTRY_FILTERS)
    def entries() -> list[EntryRow]:
        return ENTRIES

    result = serve(mcp).call_tool("entries", arguments)
    assert result["isError"] and next(iter(arguments)) in result["content"][0]["text"]


@pytest.mark.parametrize(
    ("filter_fields", "message"),
    [
        (
            ["title__contians", "number__between"],
            "unknown lookup(s) in filter_fields: title__contians, number__between",
        ),
        ({"title": ["icontains", "nope"]}, "unknown lookup(s) in filter_fields: title__nope"),
        (["colour__in", "title"], "filter_fields not in the item schema: colour__in"),
        (["amount__contains"], "amount__contains (contains needs a string field, amount is Integer)"),
        (["flagged__gt"], "flagged__gt (gt needs an ordered field, flagged is Boolean)"),
    ],
)
def test_lookup_registration_errors(filter_fields: t.Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        build_list_tool(lambda: [], name="x", item_schema=Entry, filter_fields=filter_fields)
    with pytest.raises(TypeError, match="not a string"):
        build_list_tool(lambda: [], name="x", item_schema=Entry, filter_fields="title")


def test_a_comparison_python_cannot_make_names_the_filter() -> None:
    rows = [{"number": 1, "day": "2024-01-01"}]  # a string where the schema says date
    tool = build_list_tool(lambda: rows, name="x", item_schema=Entry, filter_fields=["day__gte"])
    with pytest.raises(TypeError, match=r"cannot compare day \(str\) with the day__gte argument \(date\)"):
        tool.func(day__gte=datetime.date(2024, 1, 1))


# -- the session: session=, or the extension's MCP(transaction=...) ------------------------------


def test_the_extensions_transaction_runs_the_select(
    engine: sa.Engine, make_app: t.Callable[..., Flask], make_client: t.Callable[..., MCPTestClient]
) -> None:
    session = orm.scoped_session(orm.sessionmaker(engine))
    extension = MCP(name="tx", transaction=session)

    @extension.list_tool(item_schema=Entry, filter_fields=["flagged"], ordering_fields=["number"])
    def flagged_entries() -> sa.Select[t.Any]:
        return sa.select(EntryRecord)

    @extension.retrieve_tool(item_schema=Entry)
    def entry(number: int) -> sa.Select[t.Any]:
        return sa.select(EntryRecord).where(EntryRecord.number == number)

    # Set up on an app only after the tools were registered: the session is looked up when they run.
    client = make_client(make_app(extension, MCP_STATELESS=True))
    client.initialize()
    found = call(client, "flagged_entries", {"flagged": True, "ordering": "-number"})["result"]
    assert numbers(found) == [row.number for row in reversed(ENTRIES) if row.flagged]
    assert call(client, "entry", {"number": 4})["title"] == ENTRIES[3].title
    session.remove()


def test_a_select_without_any_session_is_refused_at_registration(mcp: MCP, engine: sa.Engine) -> None:
    def orphans() -> sa.Select[t.Any]:
        return sa.select(EntryRecord)

    with pytest.raises(ValueError, match="'orphans' returns a SQLAlchemy Select but has no session to run it"):
        mcp.list_tool(item_schema=Entry)(orphans)
    with pytest.raises(ValueError, match="'one' returns a SQLAlchemy Select but has no session to run it"):
        mcp.retrieve_tool(item_schema=Entry, name="one")(orphans)
    assert not mcp.tools
    # With a session of its own, or one from the extension, the same function is fine.
    mcp.list_tool(item_schema=Entry, session=orm.sessionmaker(engine))(orphans)
    MCP(transaction=orm.scoped_session(orm.sessionmaker(engine))).retrieve_tool(item_schema=Entry)(orphans)
    assert list(mcp.tools) == ["orphans"]


def test_a_transaction_hook_is_no_session(engine: sa.Engine, serve: Factory) -> None:
    make_session = orm.sessionmaker(engine)
    extension = MCP(name="hook", transaction=make_session.begin)

    @extension.list_tool(item_schema=Entry)
    def hooked() -> t.Any:  # not annotated as a Select: found out when it returns one
        return sa.select(EntryRecord)

    result = serve(extension).call_tool("hooked", {})
    assert result["isError"]
    text = result["content"][0]["text"]
    assert "no session to run it" in text and "which is no session" in text and "begin" in text
