"""Attachments in an S3-compatible store (django-storages' S3Storage), against a real server
process: moto in server mode on 127.0.0.1, started and stopped by this module."""

from __future__ import annotations

import io
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from PIL import Image

from kanban.data.attachments import (
    attachment_delete,
    attachment_list,
    attachment_open,
    attachment_upload,
)
from kanban.projects.lifecycle import project_delete
from tests.factories import a_project, users
from tests.live import free_port

pytestmark = pytest.mark.django_db

CREDENTIALS = {"access_key": "testing", "secret_key": "testing", "region_name": "us-east-1"}


@pytest.fixture(scope="module")
def s3_server() -> Iterator[str]:
    port = free_port()
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("moto_server")), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.1)
        yield endpoint
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def bucket(s3_server: str, settings: Any) -> Any:
    name = f"attachments-{time.monotonic_ns()}"
    s3 = boto3.resource(
        "s3",
        endpoint_url=s3_server,
        aws_access_key_id=CREDENTIALS["access_key"],
        aws_secret_access_key=CREDENTIALS["secret_key"],
        region_name=CREDENTIALS["region_name"],
    )
    s3.create_bucket(Bucket=name)
    settings.STORAGES = {
        **settings.STORAGES,
        "attachments": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": name,
                "endpoint_url": s3_server,
                "default_acl": None,
                "querystring_auth": False,
                "file_overwrite": False,
                **CREDENTIALS,
            },
        },
    }
    return s3.Bucket(name)


def keys(bucket: Any) -> list[str]:
    return sorted(item.key for item in bucket.objects.all())


def test_a_picture_goes_to_the_bucket_comes_back_and_leaves_with_its_board(
    bucket: Any, django_capture_on_commit_callbacks: Any
) -> None:
    alice, bob, carol = users("alice", "bob", "carol")
    board = a_project(owner=alice, members={bob: "developer", carol: "guest"})
    picture = io.BytesIO()
    Image.new("RGB", (1000, 500), (0, 90, 0)).save(picture, format="JPEG")
    shown = attachment_upload(
        user=bob,
        project_id=board.id,
        card="c1",
        name="field.jpg",
        content_type="image/jpeg",
        stream=io.BytesIO(picture.getvalue()),
    )
    assert keys(bucket) == [f"{board.id}/{shown['id']}", f"{board.id}/{shown['id']}.thumb.png"]

    (listed,) = attachment_list(user=carol, project_id=board.id, card="c1")
    download = attachment_open(user=carol, token=listed["url"].split("/")[2])
    with download.file as f:
        assert f.read() == picture.getvalue()
    assert download.content_type == "image/jpeg"

    notes = attachment_upload(
        user=bob,
        project_id=board.id,
        card="c2",
        name="notes.txt",
        content_type="text/plain",
        stream=io.BytesIO(b"bring boots"),
    )
    with django_capture_on_commit_callbacks(execute=True):
        attachment_delete(user=bob, project_id=board.id, card="c2", attachment_id=notes["id"])
    assert len(keys(bucket)) == 2

    with django_capture_on_commit_callbacks(execute=True):
        project_delete(project=board)
    assert keys(bucket) == []
