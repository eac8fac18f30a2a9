"""``bounded_cache``: each key built once, by value, at most ``MAX_ENTRIES`` kept."""

from __future__ import annotations

from joint_tf_publisher.bounded_cache import MAX_ENTRIES, bounded_cache


def test_a_key_is_built_once_and_found_by_value() -> None:
    built: list[tuple[str, ...]] = []

    def build(names: tuple[str, ...]) -> int:
        built.append(names)
        return len(names)

    cache = bounded_cache(build)
    assert cache(("a", "b")) == 2
    assert cache(tuple(["a", "b"])) == 2  # an equal tuple, another object
    assert built == [("a", "b")]


def test_the_least_recently_used_key_goes_beyond_max_entries() -> None:
    built: list[int] = []

    def build(key: int) -> int:
        built.append(key)
        return 2 * key

    cache = bounded_cache(build)
    for key in range(MAX_ENTRIES):
        cache(key)
    cache(0)  # now the most recently used
    cache(MAX_ENTRIES)  # one more: key 1 goes
    built.clear()
    cache(0)
    cache(1)
    assert built == [1]
