#!/usr/bin/env python3
"""Every relative link in README.md and docs/*.md resolves: the file exists and, for a link
with #anchor, the target has a heading with that anchor (GitHub's rule: lower case, spaces to
hyphens, punctuation dropped) or an <a id> of that name. Usage: doc_links.py REPO_ROOT"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)\)')


def slug(heading):
    text = re.sub(r'[^\w\- ]', '', heading.strip().lower())
    return text.replace(' ', '-')


def outside_code(text):
    """The lines of a markdown file that are not inside ``` fences."""
    fenced = False
    for number, line in enumerate(text.split('\n'), 1):
        if line.startswith('```'):
            fenced = not fenced
        elif not fenced:
            yield number, line


def anchors(path):
    """Heading anchors, and explicit <a id="..."> ones."""
    found = set()
    for _, line in outside_code(path.read_text()):
        if line.startswith('#'):
            found.add(slug(line.lstrip('#')))
        found.update(re.findall(r'<a id="([^"]+)"', line))
    return found


broken = []
files = [root / 'README.md'] + sorted((root / 'docs').glob('*.md'))
for page in files:
    for number, line in outside_code(page.read_text()):
        for target in LINK.findall(re.sub(r'`[^`]*`', '', line)):
            if re.match(r'^[a-z]+:', target):
                continue
            file_part, _, anchor = target.partition('#')
            dest = (page.parent / file_part).resolve() if file_part else page
            if not dest.exists():
                broken.append(f'{page.relative_to(root)}:{number}: {target}: no such file')
            elif anchor and dest.suffix == '.md' and anchor not in anchors(dest):
                broken.append(f'{page.relative_to(root)}:{number}: {target}: no heading #{anchor}')
for b in broken:
    print(b)
print(f'{len(files)} pages, {len(broken)} broken links')
print(f'{1 if not broken else 0} passed, {1 if broken else 0} failed')
sys.exit(1 if broken else 0)
