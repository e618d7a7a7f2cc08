"""#38's targets: a team moves in (I1: a large Trello export imported by the job worker, the
upload's request answering at once), trusts its data to the server (I2: backup and restore
of a deployment with a large board, its history and its attachments) and shares a file
(I3: a 10 MB attachment uploaded and seen, then downloaded, by another viewer).

I1 and I3 go through a daphne worker over HTTP and the bridge as a browser would; I1's
import runs in ``manage.py db_worker --batch``, a child whose peak memory it prints; I2 runs
``manage.py backup`` and ``manage.py restore`` (into a database of its own) as an operator
would."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

import requests

from bench import env
from bench.env import Scene, Server
from bench.stats import Figure, at_most
from bench.trello_export import export_bytes

#: A person's write-bytes budget, lifted as the bridge's rates are (bench/env.py): I2 and I3
#: write their 50 MB of files as one person, which is what the limit exists to slow down.
LIFTED = {"KANBAN_WRITE_BYTES_PER_USER": "1e12", "KANBAN_WRITE_BYTES_BURST": "1e12"}

#: The worker child: django-tasks' own batch worker, then its peak resident memory (KiB).
WORKER = (
    "import os, resource, django\n"
    "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'kanban.settings')\n"
    "django.setup()\n"
    "from django.core.management import call_command\n"
    "call_command('db_worker', '--batch', '--no-reload', '--no-startup-delay', verbosity=0)\n"
    "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
)


def _session(server: Server, scene: Scene, page: str) -> tuple[requests.Session, str]:
    """alice's browser session, with the CSRF token a page of hers sets."""
    session = requests.Session()
    name, value = scene.cookie.split("=", 1)
    session.cookies.set(name, value)
    session.get(server.url + page, timeout=30).raise_for_status()
    return session, str(session.cookies.get("csrftoken"))


def _upload(server: Server, scene: Scene, data: bytes, *, dry_run: bool) -> tuple[float, str]:
    """Seconds the upload's request took, and the job it started."""
    session, token = _session(server, scene, "/imports/trello")
    form = {"csrfmiddlewaretoken": token, **({"dry_run": "on"} if dry_run else {})}
    started = time.perf_counter()
    response = session.post(
        server.url + "/imports/trello",
        files={"file": ("export.json", data, "application/json")},
        data=form,
        headers={"Referer": server.url + "/imports/trello"},
        allow_redirects=False,
        timeout=120,
    )
    took = time.perf_counter() - started
    if response.status_code != 302:
        raise RuntimeError(f"the upload answered {response.status_code}: {response.text[:300]}")
    return took, response.headers["Location"].rstrip("/").rsplit("/", 1)[-1]


def _drop_jobs(job_ids: list[str]) -> None:
    """Uploads measured only for their request: ended, so the worker skips them."""
    from kanban.models import ImportJob, ImportUpload

    ImportUpload.objects.filter(job_id__in=job_ids).delete()
    ImportJob.objects.filter(id__in=job_ids).update(status="failed", error_code="bench")


def i1(*, cards: int, items: int, comments: int, big_mb: int, scene: Scene) -> list[Figure]:
    from kanban.models import ImportJob

    data = export_bytes(cards=cards, items=items, comments=comments)
    # The same board with long descriptions: the upload's size, not the import's work.
    big = export_bytes(
        cards=cards, items=items, comments=comments, description_bytes=big_mb * 2**20 // cards
    )
    request = Figure(
        "I1",
        f"upload of a {len(big) / 2**20:.0f} MB Trello export: request (stores, enqueues)",
        "s",
        at_most(1.0),
    )
    started = Figure(
        "I1",
        f"upload that started the import ({len(data) / 2**20:.1f} MB): request",
        "s",
        at_most(1.0),
    )
    with env.daphne() as server:
        measured = []
        for _ in range(3):
            took, job_id = _upload(server, scene, big, dry_run=True)
            request.rounds.append(took)
            measured.append(job_id)
        _drop_jobs(measured)
        took, job_id = _upload(server, scene, data, dry_run=False)
        started.rounds.append(took)
    began = time.perf_counter()
    worker = subprocess.run(
        [sys.executable, "-c", WORKER], cwd=env.ROOT, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - began
    job = ImportJob.objects.get(id=job_id)
    if job.status != "succeeded" or job.started_at is None or job.finished_at is None:
        raise RuntimeError(f"the import ended {job.status}: {job.error_message}")
    peak_kib = int(worker.stdout.split("PEAK")[-1].split()[0])
    counts = (job.report or {}).get("counts", {})
    imported = Figure(
        "I1",
        f"Trello import of {cards} cards, {items} checklist items, {comments} comments: job",
        "s",
        at_most(60.0),
        [(job.finished_at - job.started_at).total_seconds()],
        note=f"worker run {wall:.1f} s; imported {counts.get('cards')} cards, "
        f"{counts.get('checklist items')} items, {counts.get('comments')} comments",
    )
    memory = Figure("I1", "Trello import: peak worker memory", "MB", None, [peak_kib / 1024])
    return [request, started, imported, memory]


# I2 ---------------------------------------------------------------------------------------


def _deployment(*, cards: int, versions: int, attachment_mb: int) -> str:
    """A board of ``cards`` cards, each written until ``versions`` versions are kept in
    all, with ``attachment_mb`` MB of attachments (1 MB files, incompressible)."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from kanban.access.memberships import membership_set
    from kanban.data.attachments import attachment_upload
    from kanban.projects.lifecycle import project_create
    from storage import engine
    from storage.namespaces import project_kv
    from storage.writes import set_value

    owner = get_user_model().objects.create_user(f"dora-{os.urandom(4).hex()}")
    board = project_create(name="Backup bench board")
    membership_set(user=owner, project=board, role="owner")
    keep = int(settings.KANBAN_HISTORY_REVISIONS)
    source = {"user": owner.get_username(), "via": "cli"}
    for round_ in range(max(1, versions // cards)):
        writes = [
            set_value(
                project_kv(board.id, f"card:c{n}"),
                {"id": f"c{n}", "title": f"Card {n}", "description": "x" * 200, "v": round_},
                source=source,
                keep=keep,
            )
            for n in range(cards)
        ]
        engine.commit(writes)
    for n in range(attachment_mb):
        attachment_upload(
            user=owner,
            project_id=board.id,
            card=f"c{n % cards}",
            name=f"file-{n}.bin",
            content_type="application/octet-stream",
            stream=io.BytesIO(os.urandom(2**20)),
        )
    return str(board.id)


def _run(argv: list[str], *, database_url: str, attachments: Path) -> float:
    """Seconds ``argv`` took, run on a deployment of its own (bench/isolated_settings.py)."""
    environ = {
        **os.environ,
        **LIFTED,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "bench.isolated_settings",
        "KANBAN_BENCH_ATTACHMENTS": str(attachments),
    }
    started = time.perf_counter()
    subprocess.run(
        argv,
        cwd=env.ROOT,
        env=environ,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def _manage(*args: str, database_url: str, attachments: Path) -> float:
    return _run(
        [sys.executable, "manage.py", *args], database_url=database_url, attachments=attachments
    )


def _fresh_database(url: str, suffix: str, attachments: Path) -> str:
    """``url``'s database with ``suffix`` added, dropped, made again and migrated."""
    import psycopg
    from psycopg import sql

    parts = urllib.parse.urlsplit(url)
    name = parts.path.lstrip("/") + suffix
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    target = parts._replace(path="/" + name).geturl()
    _manage("migrate", "--no-input", "-v", "0", database_url=target, attachments=attachments)
    return target


def i2(*, cards: int, versions: int, attachment_mb: int) -> list[Figure]:
    what = f"{cards}-card board, {versions} kept versions, {attachment_mb} MB of attachments"
    backup = Figure("I2", f"backup of a deployment with a {what}", "s", at_most(30.0))
    restore = Figure("I2", "restore of it into an empty database (--verify)", "s", at_most(30.0))
    with tempfile.TemporaryDirectory() as folder:
        archive = Path(folder) / "kanban-backup.zip"
        files, again = Path(folder) / "attachments", Path(folder) / "restored"
        source = _fresh_database(os.environ["DATABASE_URL"], "_backup", files)
        _run(
            [
                sys.executable,
                "-m",
                "bench.moving_bench",
                *map(str, (cards, versions, attachment_mb)),
            ],
            database_url=source,
            attachments=files,
        )
        backup.rounds.append(
            _manage("backup", str(archive), database_url=source, attachments=files)
        )
        target = _fresh_database(os.environ["DATABASE_URL"], "_restore", again)
        restore.rounds.append(
            _manage("restore", str(archive), "--verify", database_url=target, attachments=again)
        )
        backup.note = f"archive {archive.stat().st_size / 2**20:.0f} MB"
    return [backup, restore]


# I3 ---------------------------------------------------------------------------------------


def _viewer(board_id: Any) -> Scene:
    """bob, a guest of the board: another person, who may read it."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from kanban.access.memberships import membership_set
    from kanban.models import Project

    bob = get_user_model().objects.create_user(f"bob-{os.urandom(4).hex()}")
    membership_set(user=bob, project=Project.objects.get(pk=board_id), role="guest")
    client = Client()
    client.force_login(bob)
    cookie = f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"
    return Scene(board_id=board_id, user_id=bob.pk, cookie=cookie)


async def _seen_and_downloaded(
    server: Server, scene: Scene, viewer: Scene, card: str, data: bytes
) -> float:
    from bench.bridge_bench import Wire, open_bridge

    socket = await open_bridge(server, viewer)
    try:
        await Wire(socket).call("watch", value={"prefix": "attachments:"})
        session, token = _session(server, scene, "/")
        api = f"{server.url}/api/v1/projects/{scene.board_id}/attachments/"
        started = time.perf_counter()
        upload = asyncio.create_task(
            asyncio.to_thread(
                session.post,
                api,
                files={"file": ("big.bin", data, "application/octet-stream")},
                data={"card": card},
                headers={"X-CSRFToken": token, "Referer": server.url + "/"},
                timeout=60,
            )
        )
        while True:
            event = json.loads(await asyncio.wait_for(socket.recv(), 30))
            keys = [change.get("key") for change in event.get("changes") or []]
            if event.get("event") == "changes" and f"attachments:{card}" in keys:
                break
        reply = await upload
        reply.raise_for_status()
        reader = requests.Session()
        name, value = viewer.cookie.split("=", 1)
        reader.cookies.set(name, value)
        listed = reader.get(api, params={"card": card}, timeout=30)
        listed.raise_for_status()
        items = listed.json()["attachments"]
        got = reader.get(urllib.parse.urljoin(server.url, items[-1]["url"]), timeout=60)
        got.raise_for_status()
        if got.content != data:
            raise RuntimeError("the viewer downloaded other bytes")
        return time.perf_counter() - started
    finally:
        await socket.close()


def i3(*, rounds: int, megabytes: int, scene: Scene) -> list[Figure]:
    from storage import engine
    from storage.namespaces import project_kv
    from storage.writes import set_value

    card = f"i3{os.urandom(3).hex()}"
    engine.commit([set_value(project_kv(scene.board_id, f"card:{card}"), {"id": card})])
    viewer = _viewer(scene.board_id)
    figure = Figure(
        "I3",
        f"{megabytes} MB attachment uploaded -> another viewer's socket sees it, downloads it",
        "s",
        at_most(2.0),
    )
    os.environ.update(LIFTED)
    with env.daphne() as server:
        for _ in range(rounds):
            data = os.urandom(megabytes * 2**20)
            figure.rounds.append(
                asyncio.run(_seen_and_downloaded(server, scene, viewer, card, data))
            )
    return [figure]


if __name__ == "__main__":
    # I2's deployment, made in a child on its own database (see ``i2``).
    import django

    django.setup()
    _deployment(cards=int(sys.argv[1]), versions=int(sys.argv[2]), attachment_mb=int(sys.argv[3]))
