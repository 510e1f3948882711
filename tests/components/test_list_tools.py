"""List and retrieve tools: schemas, the filter/ordering/pagination pipeline, SQLAlchemy."""

from __future__ import annotations

import dataclasses
import math
import typing as t

import jsonschema
import marshmallow as ma
import pytest
from flask import Flask

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


def test_a_list_tool_must_return_a_collection() -> None:
    tool = build_list_tool(lambda: {"number": 1}, name="x", item_schema=Invoice)
    with pytest.raises(TypeError, match="must return a collection"):
        tool.func()


def test_sqlalchemy(mcp: MCP, serve: Factory) -> None:
    sa = pytest.importorskip("sqlalchemy")
    from sqlalchemy import orm

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
        assert unconfigured["isError"] and "no session=" in unconfigured["content"][0]["text"]
