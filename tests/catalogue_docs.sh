#!/usr/bin/env bash
# docs/catalogue.md is what `drift list --markdown` writes from the catalogue's rows: a member,
# a key or a help text changed without the page written again fails here, with the command that
# writes it (docs/development.md#the-catalogue-page).
set -euo pipefail
drift="$1"
page="$2"
if ! diff -u "$page" <("$drift" list --markdown); then
  echo "docs/catalogue.md is out of date: write it again with"
  echo "  build/tools/drift list --markdown > docs/catalogue.md"
  exit 1
fi
