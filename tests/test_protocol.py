"""reflex.protocol: the one schema both sides check, the encoder, the validation, the reply split."""

import json

import pytest

from reflex import protocol


def test_every_daemon_op_has_a_schema_and_every_schema_an_op():
    from reflex.daemon.ops import Ops
    handlers = {name[3:].replace("_", ".") for name in dir(Ops) if name.startswith("op_")}
    assert handlers == set(protocol.REQUESTS)


def test_the_encoder_writes_what_the_validator_accepts():
    head = protocol.request_header("run.finish", {
        "uid": "a" * 20, "ts": 1.5, "capture": "/c/x.out", "command": 'echo "hi" \\ \ud800', "exit": 1,
        "duration_ms": 2.25, "raw": True, "redacted_from": [".env", "a\nb"], "slicer": None}, body_len=7)
    assert head.endswith(b"}\n")
    hdr = json.loads(head)
    req = protocol.parse_request(hdr)
    assert req.op == "run.finish" and req.get("len") == 7
    assert req.get("command") == 'echo "hi" \\ \ud800'  # a lone surrogate survives as an escape
    assert req.get("redacted_from") == [".env", "a\nb"] and req.get("raw") is True
    assert req.get("slicer") is None and req.get("exit") == 1


@pytest.mark.parametrize("op,fields,message", [
    ("run.finish", {"uid": "u" * 10, "captur": "/c"}, "no field 'captur'"),
    ("hook", {"harness": 3}, "must be a string"),
    ("get", {"json": "yes"}, "must be a boolean"),
    ("run.start", {"stable": True}, "must be a integer"),
])
def test_a_misspelled_or_mistyped_field_fails_where_it_is_written(op, fields, message):
    with pytest.raises(ValueError, match=message):
        protocol.request_header(op, fields)


@pytest.mark.parametrize("hdr,code", [
    ([1, 2], "bad_request"),
    ({"v": 99, "op": "ping"}, "protocol"),
    ({"v": protocol.PROTOCOL, "op": "nope"}, "unknown_op"),
    ({"v": protocol.PROTOCOL, "op": "hook", "uid": "u" * 10, "harness": "claude", "harnes": "x"}, "bad_request"),
    ({"v": protocol.PROTOCOL, "op": "hook", "uid": "u" * 10, "harness": "claude", "ts": {"a": 1}}, "bad_request"),
    ({"v": protocol.PROTOCOL, "op": "hook", "uid": "u" * 10}, "bad_request"),
    ({"v": protocol.PROTOCOL, "op": "get", "address": ""}, "bad_request"),
    ({"v": protocol.PROTOCOL, "op": "run.finish", "uid": "u" * 10, "capture": "/c", "exit": True}, "bad_request"),
])
def test_the_daemon_refuses_what_the_schema_does_not_allow(hdr, code):
    with pytest.raises(protocol.BadRequest) as e:
        protocol.parse_request(hdr)
    assert e.value.code == code


def test_a_handler_cannot_read_a_field_its_op_does_not_declare():
    req = protocol.parse_request({"v": protocol.PROTOCOL, "op": "ping"})
    with pytest.raises(KeyError):
        req.get("capture")


def test_the_reply_split_is_the_same_from_bytes_and_from_a_dict():
    fields = {"ok": True, "out": 3, "len": 5}
    head = protocol.encode_header(fields)
    assert protocol.split_reply(head, b"abcde") == (b"abc", b"de")
    assert protocol.split_reply(fields, b"abcde") == (b"abc", b"de")
    # No "out": everything is stdout (older daemons); a lying "out" is clamped.
    assert protocol.split_reply({"ok": True}, b"xy") == (b"xy", b"")
    assert protocol.split_reply({"out": 99}, b"xy") == (b"xy", b"")


def test_spool_marks_append_to_an_encoded_header():
    head = protocol.request_header("hook", {"uid": "u" * 10, "harness": "claude"}, 4)
    marked = json.loads(protocol.with_fields(head, {"spooled": True, "local": "deny"}))
    assert marked["spooled"] is True and marked["local"] == "deny" and marked["len"] == 4
    protocol.parse_request(marked)
