"""The labelling page's HTTP API: the token, the events it appends, resuming, escaping."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from label_toy import XSS, write_scores
from starlette.testclient import TestClient

from rag_judge.calibration.label_log import read_label_log
from rag_judge.calibration.labels import read_human_labels
from rag_judge.core.errors import InputError
from rag_judge.labelling.app import label_app
from rag_judge.labelling.plan import plan_labelling
from rag_judge.labelling.store import LabelStore

TOKEN = "t0ken-for-tests"


def open_store(tmp_path: Path, **sampling: Any) -> LabelStore:
    scores = tmp_path / "scores.jsonl"
    if not scores.exists():
        write_scores(scores)
    options = {"sample": None, "strategy": None, "seed": 0} | sampling
    plan = plan_labelling(scores, "faithfulness", **options)
    return LabelStore(tmp_path / "labels.jsonl", plan, "alice")


@pytest.fixture
def store(tmp_path: Path) -> LabelStore:
    return open_store(tmp_path)


@pytest.fixture
def client(store: LabelStore) -> TestClient:
    return TestClient(label_app(store, TOKEN))


def events(store: LabelStore) -> list[dict[str, Any]]:
    return [json.loads(line) for line in store.path.read_text(encoding="utf-8").splitlines()]


def label(client: TestClient, id_: str, value: int | None, **more: Any) -> Any:
    return client.post(f"/{TOKEN}/api/label", json={"id": id_, "label": value, **more})


@pytest.mark.parametrize(
    "path",
    ["/", "/api/state", "/label.js", "/wrong/", "/wrong/api/state", f"/{TOKEN}x/", f"/x{TOKEN}/"],
)
def test_every_request_without_the_token_is_forbidden(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 403
    assert "token" in response.text
    assert "script-src 'self'" in response.headers["content-security-policy"]


def test_posts_without_the_token_are_forbidden_and_write_nothing(
    client: TestClient, store: LabelStore
) -> None:
    assert client.post("/api/label", json={"id": "r1", "label": 1}).status_code == 403
    assert not store.path.exists()


def test_the_page_and_its_assets(client: TestClient) -> None:
    page = client.get(f"/{TOKEN}/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "default-src 'none'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    assert '<script src="label.js"' in page.text
    assert "<script>" not in page.text  # no inline script: the CSP would refuse it anyway
    assert client.get(f"/{TOKEN}/label.js").headers["content-type"].startswith("text/javascript")
    assert client.get(f"/{TOKEN}/label.css").status_code == 200
    assert client.get(f"/{TOKEN}", follow_redirects=False).status_code in (307, 308)


def test_the_page_holds_no_row_text_and_nothing_of_settings(client: TestClient) -> None:
    page = client.get(f"/{TOKEN}/").text
    for text in ("Question of r1", "Paris", "alert(1)", "onerror", "api_key", "API key"):
        assert text not in page


def test_the_state_is_the_first_row_as_json(client: TestClient) -> None:
    state = client.get(f"/{TOKEN}/api/state").json()
    assert (state["labelled"], state["skipped"], state["total"], state["position"]) == (0, 0, 4, 1)
    assert state["can_undo"] is False
    row = state["row"]
    assert row["id"] == "r1"
    assert row["contexts"] == ["First passage of r1.", "Second passage of r1, cited."]
    assert row["claims"][0]["chunks"] == [2]
    assert row["claims"][0]["reason"] == "Passage 2 says so."
    assert row["value"] == 0.9


def test_markup_in_a_row_travels_as_json_text(client: TestClient) -> None:
    label(client, "r1", 1)
    response = client.get(f"/{TOKEN}/api/state")
    assert response.headers["content-type"] == "application/json"
    assert response.json()["row"]["answer"] == XSS
    assert response.json()["row"]["claims"][0]["reason"] == "<b>bold</b> reason"


def test_labels_skips_notes_and_undo_are_appended(client: TestClient, store: LabelStore) -> None:
    claims = [{"claim": 0, "label": 1, "claim_text": "Paris is the capital of France."}]
    assert label(client, "r1", 1, claims=claims).json()["row"]["id"] == "r2"
    assert label(client, "r2", 0, note="made up").json()["row"]["id"] == "r4"
    state = label(client, "r4", None).json()
    assert (state["labelled"], state["skipped"], state["row"]["id"]) == (2, 1, "r5")
    state = client.post(f"/{TOKEN}/api/undo", json={}).json()
    assert (state["labelled"], state["skipped"], state["row"]["id"]) == (2, 0, "r4")
    written = events(store)
    assert [(e["id"], e.get("label"), e.get("undo")) for e in written] == [
        ("r1", 1, None),
        ("r2", 0, None),
        ("r4", None, None),
        ("r4", None, True),
    ]
    assert written[0]["claims"] == claims
    assert written[1]["note"] == "made up"
    assert written[2]["skipped"] is True
    sampling = {"strategy": "all", "seed": None, "sample": None, "population": 4}
    assert all(e["sampling"].items() >= sampling.items() for e in written)
    assert {e["annotator"] for e in written} == {"alice"}
    assert written[0]["metric"] == "faithfulness"


def test_undo_goes_back_one_row_at_a_time(client: TestClient) -> None:
    label(client, "r1", 1)
    label(client, "r2", 0)
    assert client.post(f"/{TOKEN}/api/undo", json={}).json()["row"]["id"] == "r2"
    assert client.post(f"/{TOKEN}/api/undo", json={}).json()["row"]["id"] == "r1"
    nothing = client.post(f"/{TOKEN}/api/undo", json={})
    assert nothing.status_code == 409
    assert nothing.json()["error"] == "nothing to undo"


def test_a_row_labelled_twice_is_refused_not_written_twice(
    client: TestClient, store: LabelStore
) -> None:
    label(client, "r1", 1)
    again = label(client, "r1", 0)  # a key pressed twice before the page moved on
    assert again.status_code == 409
    assert again.json()["state"]["row"]["id"] == "r2"
    assert label(client, "r3", 1).status_code == 409  # unscored: not in the sample
    assert len(events(store)) == 1


@pytest.mark.parametrize(
    "body",
    [
        {"id": "r1", "label": 2},
        {"id": "r1", "label": True},
        {"label": 1},
        {"id": "r1", "label": 1, "note": 5},
        {"id": "r1", "label": 1, "claims": [{"claim": -1, "label": 1}]},
        [1, 2],
    ],
)
def test_malformed_requests_are_refused(client: TestClient, store: LabelStore, body: Any) -> None:
    response = client.post(f"/{TOKEN}/api/label", json=body)
    assert response.status_code == 400
    assert not store.path.exists()


def test_the_end_of_the_sample(client: TestClient) -> None:
    for id_ in ("r1", "r2", "r4"):
        label(client, id_, 1)
    state = label(client, "r5", 0).json()
    assert state["row"] is None
    assert state["position"] is None
    assert (state["labelled"], state["can_undo"]) == (4, True)


def test_a_restart_resumes_at_the_first_unlabelled_row(tmp_path: Path) -> None:
    first = TestClient(label_app(open_store(tmp_path, sample=3, seed=2), TOKEN))
    ids = []
    for _ in range(2):
        row = first.get(f"/{TOKEN}/api/state").json()["row"]
        ids.append(row["id"])
        label(first, row["id"], 1)
    again = open_store(tmp_path, sample=3, seed=2)
    state = TestClient(label_app(again, TOKEN)).get(f"/{TOKEN}/api/state").json()
    assert state["labelled"] == 2
    assert state["row"]["id"] == again.plan.ids[2]
    assert list(again.plan.ids[:2]) == ids
    assert read_label_log(again.path).labels == dict.fromkeys(ids, 1)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"sample": 3, "seed": 3}, "--seed 3 here, 2 in the log"),
        ({"sample": 2, "seed": 2}, "--sample 2 here, 3 in the log"),
        ({"sample": 3, "seed": 2, "strategy": "uncertain"}, "--strategy uncertain here, random"),
        ({}, "--strategy (none) here, random in the log"),
    ],
)
def test_a_resume_of_another_sample_is_refused(
    tmp_path: Path, options: dict[str, Any], said: str
) -> None:
    store = open_store(tmp_path, sample=3, seed=2)
    store.label(store.plan.ids[0], 1, note="", claims=[])
    with pytest.raises(InputError, match="holds the labels of another sample") as refused:
        open_store(tmp_path, **options)
    assert said in str(refused.value)


def test_a_resume_with_the_scores_named_otherwise_is_the_same_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(tmp_path)
    store.label("r1", 1, note="", claims=[])
    monkeypatch.chdir(tmp_path)
    plan = plan_labelling(Path("scores.jsonl"), "faithfulness", sample=None, strategy=None, seed=0)
    assert LabelStore(tmp_path / "labels.jsonl", plan, "bob").next_id == "r2"


def test_a_plain_labels_file_is_not_taken_for_a_log(tmp_path: Path) -> None:
    (tmp_path / "labels.jsonl").write_text('{"id": "r1", "label": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match="is not a log of rag-judge label"):
        open_store(tmp_path)


def test_a_line_cut_off_by_a_kill_is_dropped_and_a_whole_one_kept(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.label("r1", 1, note="", claims=[])
    store.label("r2", 0, note="", claims=[])
    text = store.path.read_text(encoding="utf-8")
    store.path.write_text(text + '{"id": "r4", "lab', encoding="utf-8")
    again = open_store(tmp_path)
    assert again.repaired
    assert again.next_id == "r4"
    store.path.write_text(text.rstrip("\n"), encoding="utf-8")  # whole, only its newline lost
    again = open_store(tmp_path)
    assert not again.repaired
    assert again.next_id == "r4"
    again.label("r4", 1, note="", claims=[])
    assert read_label_log(store.path).labels == {"r1": 1, "r2": 0, "r4": 1}


def test_calibrate_reads_the_labels_written(client: TestClient, store: LabelStore) -> None:
    label(client, "r1", 1, claims=[{"claim": 0, "label": 1}])
    label(client, "r2", 0)
    label(client, "r4", None)
    labels = read_human_labels(store.path, "binary")
    assert [(h.id, h.value) for h in labels.labels] == [("r1", 1.0), ("r2", 0.0)]
    by_claim = read_human_labels(store.path, "binary", level="claim")
    assert [(h.id, h.claim, h.value) for h in by_claim.labels] == [("r1", 0, 1.0)]


def test_an_undone_label_is_offered_again_with_its_note_and_claims(client: TestClient) -> None:
    label(client, "r1", 0, note="half true", claims=[{"claim": 0, "label": 0}])
    state = client.post(f"/{TOKEN}/api/undo", json={}).json()
    assert state["row"]["id"] == "r1"
    assert state["taken_back"] == {
        "label": 0,
        "note": "half true",
        "claims": [{"claim": 0, "label": 0}],
    }
    assert label(client, "r1", 1).json()["taken_back"] is None  # r2 was never labelled


def test_a_label_that_cannot_be_written_is_not_taken_for_kept(
    client: TestClient, store: LabelStore
) -> None:
    store.path.mkdir()  # the log's path is a folder now: appending fails
    response = label(client, "r1", 1)
    assert response.status_code == 500
    assert "the label was not saved" in response.json()["error"]
    assert store.next_id == "r1"


def test_a_websocket_without_the_token_is_refused(client: TestClient) -> None:
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws"):
        pass
    assert refused.value.code == 1008
