"""Copies of code by their paths: vendored, generated, amalgamated, declarations, build output."""

from __future__ import annotations

import pytest

from repomap.copies import is_copy, is_vendored, source_stems

COPIES = [
    "single_include/nlohmann/json.hpp", "amalgamation/sqlite3.c", "dist/sqlite3_amalgamation.c",
    "src/lib.amalgamation.c", "types/index.d.ts", "lib/index.d.cts", "lib/index.d.mts",
    "dist/axios.js", "packages/core/dist/index.cjs", "api/v1/service.pb.go",
    "proto/service_pb2.py", "pkg/apis/zz_generated.deepcopy.go", "gen/schema_generated.go",
    "lib/model.g.dart", "contrib/redis/cache.go", "deps/uv/src/unix/core.c",
    "external/zlib/inflate.c", "vendor/github.com/pkg/errors/errors.go",
    "third_party/abseil/strings.cc", "include/cargo/pyo3-build-config-0.20.2/src/impl_.rs",
    "python/pydantic_core/_pydantic_core.pyi",
]  # fmt: skip
NOT_COPIES = [
    "src/index.ts", "django/contrib/admin/options.py", "src/contrib/plugin.js",
    "lib/rack/utils.rb", "lib/matplotlib/axes/_base.py", "go/build/build.go",
    "src/distance.c", "pkg/generate/main.go", "lib/deps.rb", "src/types/index.ts",
    "log4j-1.2-api/src/main/java/Category.java", "python/pydantic_core/core_schema.py",
]  # fmt: skip


@pytest.mark.parametrize("path", COPIES)
def test_copies_of_code_by_their_path(path: str) -> None:
    assert is_copy(path), path


@pytest.mark.parametrize("path", NOT_COPIES)
def test_implementations_are_not_copies(path: str) -> None:
    assert not is_copy(path), path


def test_a_build_folder_is_a_copy_only_beside_its_src_twin() -> None:
    stems = source_stems(
        ["src/index.ts", "src/core/parse.ts", "packages/ui/src/button.tsx", "README.md"]
    )
    for path in ("lib/index.js", "es/core/parse.js", "packages/ui/lib/button.js",
                 "build/core/parse.js", "cjs/index.d.ts"):  # fmt: skip
        assert is_copy(path, stems), path
    for path in ("lib/other.js", "lib/core/lex.js", "packages/api/lib/button.js", "src/index.ts"):
        assert not is_copy(path, stems), path


def test_vendored_and_minified_assets_are_copies() -> None:
    for path in ("static/js/jquery-3.5.1.js", "web/d3.min.js", "vendor/six.py"):
        assert is_vendored(path) and is_copy(path), path
