"""Tasks: a team to-do list served over MCP, with Flask-SQLAlchemy and bearer tokens.

Run it with ``flask --app examples/tasks_app/app.py run`` (http://127.0.0.1:5000/mcp)
or ``flask --app examples/tasks_app/app.py mcp stdio`` for a desktop client
(with ``FLASK_MCP_TOKEN`` set to a token). Every caller needs a token:
``reader-token`` may read, ``writer-token`` may also create and complete tasks.

Configuration comes from ``create_app(config)``, or from ``TASKS_``-prefixed
environment variables (``TASKS_SQLALCHEMY_DATABASE_URI``,
``TASKS_MCP_CACHE_TYPE=RedisCache``, ``TASKS_MCP_CACHE_REDIS_URL``,
``TASKS_MCP_AUTH_TOKENS='{"token": {"subject": ..., "scopes": [...]}}'``...),
which is how a server of several processes (gunicorn) is set up to share
one database and one Redis.
"""

from __future__ import annotations

import datetime
import os
import typing as t

import marshmallow as ma
import sqlalchemy as sa
from flask import Flask, abort
from flask_sqlalchemy import SQLAlchemy
from marshmallow import fields, validate

from flask_mcp import MCP, Context, NotFoundError, ScopeRequired, TokenBucket, current_principal

#: The token ``examples/test_examples.py`` initializes with; it may only read.
DEFAULT_TOKEN = "reader-token"
#: Demo tokens (``MCP_AUTH_TOKENS``). A real deployment configures its own,
#: as ``flask_mcp.auth.hash_token(...)`` digests rather than the tokens.
DEMO_TOKENS: dict[str, t.Any] = {
    DEFAULT_TOKEN: {"subject": "robin", "scopes": ["tasks:read"]},
    "writer-token": {"subject": "ada", "scopes": ["tasks:read", "tasks:write"]},
}
READ = ScopeRequired("tasks:read")
WRITE = ScopeRequired("tasks:write")

db = SQLAlchemy()
# Atomic tools commit db.session when they succeed and roll it back when they fail;
# list and retrieve tools run their queries in it. Tools, resources and prompts
# need the read scope unless they say otherwise.
mcp = MCP(
    name="tasks",
    version="1.0.0",
    instructions="A team's to-do list: list, read, create and complete tasks.",
    transaction=db.session,
    default_permissions=[READ],
)


class Task(db.Model):  # type: ignore[name-defined,misc]
    # Plain columns, no Mapped[...] annotations: the example is also loaded by path,
    # outside sys.modules, where SQLAlchemy could not resolve string annotations.
    __tablename__ = "task"
    id = sa.Column(sa.Integer, primary_key=True)
    title = sa.Column(sa.String(200), nullable=False)
    done = sa.Column(sa.Boolean, nullable=False, default=False)
    priority = sa.Column(sa.Integer, nullable=False, default=3)
    due = sa.Column(sa.Date, nullable=True)
    owner = sa.Column(sa.String(80), nullable=False)


class TaskSchema(ma.Schema):
    """A task as tools and resources show it."""

    id = fields.Integer(required=True)
    title = fields.String(required=True)
    done = fields.Boolean(required=True)
    priority = fields.Integer(required=True, metadata={"description": "1 (most urgent) to 5."})
    due = fields.Date(allow_none=True)
    owner = fields.String(required=True, metadata={"description": "Who created it."})


class NewTask(ma.Schema):
    """The arguments of ``create_task``."""

    title = fields.String(required=True, validate=validate.Length(min=1, max=200))
    priority = fields.Integer(
        strict=True, load_default=3, validate=validate.Range(min=1, max=5), metadata={"description": "1 to 5."}
    )
    due = fields.Date(load_default=None, allow_none=True)


class Report(ma.Schema):
    """What ``tasks_report`` answers."""

    open = fields.Integer(required=True)
    done = fields.Integer(required=True)
    by_priority = fields.Dict(keys=fields.String(), values=fields.Integer(), data_key="byPriority", required=True)


TASK = TaskSchema()
PRIORITIES = range(1, 6)


@mcp.list_tool(
    item_schema=TaskSchema,
    # Each lookup is an argument of its own: title__icontains, priority__in, due__lt...
    filter_fields={
        "title": ["icontains"],
        "done": ["exact"],
        "priority": ["exact", "in", "lte"],
        "due": ["lt", "isnull"],
        "owner": ["exact"],
    },
    ordering_fields=["priority", "due", "id"],
    paginate=True,
    default_limit=10,
    max_limit=50,
    annotations={"readOnlyHint": True},
)
def list_tasks() -> sa.Select[tuple[Task]]:
    """The team's tasks: filter, sort and page them. The query runs in SQL, in db.session."""
    return sa.select(Task)


@mcp.retrieve_tool(item_schema=TaskSchema, annotations={"readOnlyHint": True})
def get_task(task_id: int) -> sa.Select[tuple[Task]]:
    """One task by id."""
    return sa.select(Task).where(Task.id == task_id)


@mcp.tool(input_schema=NewTask, output_schema=TaskSchema, atomic=True, permissions=[WRITE])
def create_task(title: str, priority: int, due: datetime.date | None) -> Task:
    """Add a task; it belongs to the caller. Needs the tasks:write scope."""
    principal = current_principal()
    task = Task(title=title, priority=priority, due=due, done=False, owner=principal.subject if principal else "?")
    db.session.add(task)
    db.session.flush()  # the id, before the transaction commits
    return task


@mcp.tool(output_schema=TaskSchema, atomic=True, permissions=[WRITE])
def complete_task(task_id: int) -> Task:
    """Mark a task as done. Needs the tasks:write scope."""
    task = db.session.get(Task, task_id)
    if task is None:
        raise NotFoundError(f"no task {task_id}")
    # An ORM UPDATE also updates the loaded object ("synchronize_session").
    db.session.execute(sa.update(Task).where(Task.id == task_id).values(done=True))
    return task


# Reports scan the whole table: three in a row, then one a minute per caller.
@mcp.tool(output_schema=Report, rate_limit=TokenBucket(rate=1 / 60, capacity=3))
def tasks_report(ctx: Context) -> dict[str, t.Any]:
    """Count open tasks by priority, logging and reporting progress as it goes."""
    ctx.info("counting tasks by priority")
    by_priority: dict[str, int] = {}
    for step, level in enumerate(PRIORITIES, start=1):
        wanted = sa.select(sa.func.count()).where(Task.priority == level, Task.done.is_(False))
        by_priority[str(level)] = db.session.scalar(wanted) or 0
        ctx.report_progress(step, len(PRIORITIES), f"priority {level}")
    done = db.session.scalar(sa.select(sa.func.count()).where(Task.done.is_(True))) or 0
    ctx.info(f"{sum(by_priority.values())} open, {done} done")
    return {"open": sum(by_priority.values()), "done": done, "by_priority": by_priority}


@mcp.tool(annotations={"readOnlyHint": True})
def server_status() -> dict[str, t.Any]:
    """Which worker process answered, and how many tasks it sees: for operators behind a load balancer."""
    return {"worker": os.getpid(), "tasks": db.session.scalar(sa.select(sa.func.count()).select_from(Task)) or 0}


@mcp.resource("tasks://{task_id}", mime_type="application/json", description="One task, as JSON.")
def task_resource(task_id: int) -> dict[str, t.Any]:
    task = db.session.get(Task, task_id)
    if task is None:
        abort(404)  # MCP error -32002, resource not found
    return t.cast(dict[str, t.Any], TASK.dump(task))


@mcp.prompt(completions={"hours": ["2", "4", "8"]})
def plan_day(hours: str = "8") -> str:
    """Ask for a plan of the day from the open tasks, most urgent first."""
    tasks = db.session.scalars(sa.select(Task).where(Task.done.is_(False)).order_by(Task.priority, Task.id))
    lines = "\n".join(
        f"- [P{task.priority}] {task.title}" + (f" (due {task.due})" if task.due else "") for task in tasks
    )
    return f"I have {hours} hours today. Plan my day from these open tasks:\n{lines or '- (none)'}"


SEED = [
    {"id": 1, "title": "Write the release notes", "priority": 2, "due": datetime.date(2030, 5, 2), "owner": "ada"},
    {"id": 2, "title": "Fix the login bug", "priority": 1, "due": datetime.date(2030, 4, 28), "owner": "ada"},
    {"id": 3, "title": "Order more coffee", "priority": 4, "due": None, "owner": "robin"},
    {"id": 4, "title": "Review the 50% discount PR", "priority": 3, "due": None, "owner": "robin", "done": True},
    {"id": 5, "title": "Plan the team offsite", "priority": 5, "due": datetime.date(2030, 9, 1), "owner": "ada"},
]


def init_db() -> None:
    """Create the table and the demo tasks, once, whichever process gets there first.

    The demo rows have fixed ids: when several workers start on one new
    database, the second insert is a conflict, and its rows are already there.
    """
    with db.engine.begin() as connection:
        for table in db.metadata.sorted_tables:
            connection.execute(sa.schema.CreateTable(table, if_not_exists=True))
    if db.session.scalar(sa.select(sa.func.count()).select_from(Task)):
        return
    db.session.add_all(Task(**{"done": False, **row}) for row in SEED)
    try:
        db.session.commit()
    except sa.exc.IntegrityError:
        db.session.rollback()  # another process seeded it meanwhile


def create_app(config: t.Mapping[str, t.Any] | None = None) -> Flask:
    """Build the app: defaults, then ``TASKS_*`` environment variables, then *config*."""
    app = Flask(__name__)
    app.config.update(
        # In memory (one connection, shared by the threads) unless configured otherwise.
        SQLALCHEMY_DATABASE_URI="sqlite://",
        MCP_AUTH_TOKENS=DEMO_TOKENS,
        MCP_AUTH_SCOPES_SUPPORTED=["tasks:read", "tasks:write"],
    )
    app.config.from_prefixed_env("TASKS")
    app.config.update(config or {})
    db.init_app(app)
    mcp.init_app(app)
    with app.app_context():
        init_db()
    return app


app = create_app()

if __name__ == "__main__":
    app.run(port=5000)
