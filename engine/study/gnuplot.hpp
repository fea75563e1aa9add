#pragma once
// Figures drawn by gnuplot (Debian's gnuplot-nox). Each figure is a script written beside its
// PNG and SVG, reading data files in the same directory, so a user can restyle it and run
// `gnuplot NAME.gp` there to redraw both.
#include <filesystem>
#include <string>
#include <vector>

namespace drift {

struct Figure {
  std::string name;               // file stem: NAME.gp, NAME.png, NAME.svg
  std::string title;              // a caption for index.html
  std::string body;               // gnuplot commands that draw it (no terminal, no output)
  int width = 900, height = 500;  // pixels
};

// The gnuplot program, or "" when it is not installed.
std::string find_gnuplot();

// Writes NAME.gp into `dir` and runs gnuplot there; "" on success, else what went wrong.
std::string render_figure(const std::filesystem::path& dir, const Figure& figure, const std::string& gnuplot);

// Writes `text` to `path`; a WriteError names the file when it cannot.
void write_text_file(const std::filesystem::path& path, const std::string& text);

// A number for a data file: "?" (gnuplot's missing value here) for NaN and infinities.
std::string data_number(double v);

// `text` as a gnuplot string literal in single quotes (a quote inside is doubled).
std::string gnuplot_quoted(const std::string& text);

// Virtual time in the unit that suits a run of `max_seconds`: seconds, minutes, hours or days.
struct TimeUnit {
  double seconds = 3600.0;  // one unit, in seconds
  std::string label = "h";
};
TimeUnit time_unit_for(double max_seconds);
// `seconds` for a person, in the unit that suits it: "19.6 s", "2.2 min", "1.5 h", "3.0 days".
std::string readable_duration(double seconds);

// The commands every drift figure starts with: fonts, grid, the missing-value marker.
std::string figure_preamble();

}  // namespace drift
