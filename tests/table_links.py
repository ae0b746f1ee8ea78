"""What a table's HTML links: every number of ours to the run that made it (kit.Runs), none of the paper's (its row
groups, and its columns beside ours, "paper ...")."""
import re

NUMBER = re.compile(r"^[+\-−]?\d")


def _text(cell: str) -> str:
    return re.sub(r"<[^>]+>", "", cell).strip()


def unlinked_numbers(page: str) -> list[str]:
    """The cells of our rows and columns that show a number without a link to its run."""
    found = []
    for table in re.findall(r"<table>.*?</table>", page, re.S):
        head = [_text(h) for h in re.findall(r"<th>(.*?)</th>", table.split("</thead>")[0], re.S)]
        ours = re.sub(r'<tbody class="paper">.*?</tbody>', "", table.split("</thead>")[1], flags=re.S)
        for row in re.findall(r"<tr>(.*?)</tr>", ours, re.S):
            cells = re.findall(r"<t[hd]>(.*?)</t[hd]>", row, re.S)
            found += [cell for name, cell in zip(head, cells)
                      if "paper" not in name and NUMBER.match(_text(cell)) and not cell.startswith("<a ")
                      and row.index(cell) > row.index("</th>")]
    return found


def paper_links(page: str) -> list[str]:
    """Links inside the paper's row groups (there should be none)."""
    return re.findall(r"<a [^>]*>", "".join(re.findall(r'<tbody class="paper">.*?</tbody>', page, flags=re.S)))
