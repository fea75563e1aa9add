#pragma once
// index.html of a run or a study: its tables and figures on one page that opens from disk in
// any browser. A small script counts images that failed to load and says so on the page (and
// in <body data-broken-images>, which the browser test reads).
#include <filesystem>
#include <string>
#include <vector>

#include "engine/study/gnuplot.hpp"

namespace drift {

std::string html_escape(const std::string& text);

// A Markdown pipe table (as study.md and comparison.md hold) as an HTML table; other lines
// become headings (## ...) or paragraphs.
std::string markdown_tables_to_html(const std::string& markdown);

struct HtmlPage {
  std::string title;
  std::string intro_html;       // tables, lists: already HTML
  std::vector<Figure> figures;  // shown as <figures_prefix>/NAME.png, linked to the SVG
  std::string figures_prefix = "figures";
  std::string note;        // e.g. why there are no figures
  std::string outro_html;  // after the figures: lists of runs, files
  // A page drawn while its run or study goes on: how far it is (shown under the title), and
  // the seconds after which the browser reloads it. The final page has neither.
  std::string live_text;
  int refresh_seconds = 0;
};

// Turns a live page on disk into a still one: no reloading, and `text` where the live line was.
// Used when a run or study stops before its final drawing (interrupted, failed).
std::string still_page(const std::string& live_html, const std::string& text);

std::string render_html(const HtmlPage& page);

}  // namespace drift
