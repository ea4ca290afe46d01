"""The audit tables' file names (:func:`file_labels`): each file's last parts, as many as tell it
from the others, never one name for two files."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixbench.reports.auditwords import file_labels


def test_a_file_whose_whole_path_is_another_ones_tail_is_named_by_its_path():
    # /a/b.json is the tail of /c/a/b.json: named by its whole path, the root once ("//a/b.json" before).
    labels = file_labels(["/a/b.json", "/c/a/b.json"])
    assert labels == {"/a/b.json": "/a/b.json", "/c/a/b.json": "c/a/b.json"}


_PART = st.sampled_from(["a", "b", "events", "0.json", "s.jsonl"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.lists(_PART, min_size=1, max_size=4)), min_size=1, max_size=8))
def test_every_file_has_a_name_of_its_own_that_ends_its_path(paths: list[tuple[bool, list[str]]]) -> None:
    files = [("/" if rooted else "") + "/".join(parts) for rooted, parts in paths]
    labels = file_labels(files)
    assert set(labels) == set(files)
    assert len(set(labels.values())) == len(labels)
    for file, label in labels.items():
        assert file == label or file.endswith("/" + label)
    assert file_labels(list(reversed(files))) == labels
