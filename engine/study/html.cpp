#include "engine/study/html.hpp"

#include <sstream>

namespace drift {
namespace {

std::vector<std::string> table_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '|') {
      const auto b = cell.find_first_not_of(' ');
      const auto e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
      cell.clear();
    } else {
      cell += line[i];
    }
  }
  return cells;
}

const char* kStyle = R"(<style>
body { font-family: 'DejaVu Sans', Arial, sans-serif; margin: 2em; color: #222; max-width: 1200px; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; white-space: nowrap; }
.scroll { overflow-x: auto; }
th { background: #f3f3f3; } td:first-child, th:first-child { text-align: left; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
.warning { background: #fff3cd; border: 1px solid #e0c060; padding: 0.5em 1em; }
.live { background: #e3f2fd; border: 1px solid #64b5f6; padding: 0.5em 1em; }
</style>)";

// The two marks of a live page, which still_page finds again.
const std::string kRefreshOpen = "<meta http-equiv=\"refresh\" content=\"";
const std::string kLiveOpen = "<p class=\"live\" id=\"live\">";

// Marks the page when an image fails to load, so neither a person nor a test misses it.
const char* kImageCheck = R"(<script>
window.addEventListener('load', function () {
  var broken = 0;
  document.querySelectorAll('img').forEach(function (img) {
    if (!img.complete || img.naturalWidth === 0) broken++;
  });
  document.body.setAttribute('data-images', String(document.images.length));
  document.body.setAttribute('data-broken-images', String(broken));
  if (broken > 0) {
    var p = document.createElement('p');
    p.className = 'warning';
    p.textContent = broken + ' figure(s) did not load: run drift plot on this directory again.';
    document.body.insertBefore(p, document.body.firstChild);
  }
});
</script>)";

}  // namespace

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string markdown_tables_to_html(const std::string& markdown) {
  std::ostringstream out;
  std::istringstream in(markdown);
  bool in_table = false, header = false;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] == '|') {
      if (line.rfind("|---", 0) == 0) continue;
      if (!in_table) out << "<div class=\"scroll\"><table>\n";
      header = !in_table;
      in_table = true;
      out << "<tr>";
      for (const auto& c : table_cells(line))
        out << (header ? "<th>" : "<td>") << html_escape(c) << (header ? "</th>" : "</td>");
      out << "</tr>\n";
      continue;
    }
    if (in_table) out << "</table></div>\n";
    in_table = false;
    if (line.rfind("## ", 0) == 0)
      out << "<h2>" << html_escape(line.substr(3)) << "</h2>\n";
    else if (!line.empty())
      out << "<p>" << html_escape(line) << "</p>\n";
  }
  if (in_table) out << "</table></div>\n";
  return out.str();
}

std::string render_html(const HtmlPage& page) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  if (page.refresh_seconds > 0) out << kRefreshOpen << page.refresh_seconds << "\">\n";
  out << "<title>" << html_escape(page.title) << "</title>\n"
      << kStyle << "\n"
      << kImageCheck << "\n</head><body>\n<h1>" << html_escape(page.title) << "</h1>\n";
  if (!page.live_text.empty()) out << kLiveOpen << html_escape(page.live_text) << "</p>\n";
  out << page.intro_html;
  if (!page.note.empty()) out << "<p class=\"warning\">" << html_escape(page.note) << "</p>\n";
  for (const auto& f : page.figures) {
    const auto base = page.figures_prefix + "/" + f.name;
    out << "<figure><a href=\"" << html_escape(base) << ".svg\"><img src=\"" << html_escape(base) << ".png\" alt=\""
        << html_escape(f.title) << "\" width=\"" << f.width << "\"></a><figcaption>" << html_escape(f.title)
        << " (<a href=\"" << html_escape(base) << ".gp\">gnuplot script</a>)</figcaption></figure>\n";
  }
  out << page.outro_html << "</body></html>\n";
  return out.str();
}

std::string still_page(const std::string& live_html, const std::string& text) {
  std::string page = live_html;
  if (const auto at = page.find(kRefreshOpen); at != std::string::npos) {
    const auto end = page.find('\n', at);
    page.erase(at, end == std::string::npos ? std::string::npos : end - at + 1);
  }
  if (const auto at = page.find(kLiveOpen); at != std::string::npos) {
    const auto from = at + kLiveOpen.size();
    const auto end = page.find("</p>", from);
    if (end != std::string::npos) page.replace(from, end - from, html_escape(text));
  }
  return page;
}

}  // namespace drift
