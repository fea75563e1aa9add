#include "engine/study/gnuplot.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/core/error.hpp"

namespace drift {
namespace fs = std::filesystem;

std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const auto candidate = fs::path(dir.empty() ? "." : dir) / "gnuplot";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

void write_text_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw WriteError(path.string() + ": cannot write");
}

std::string gnuplot_quoted(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return "'" + out + "'";
}

std::string data_number(double v) {
  if (!std::isfinite(v)) return "?";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

TimeUnit time_unit_for(double max_seconds) {
  if (max_seconds < 120) return {1.0, "s"};
  if (max_seconds < 2 * 3600) return {60.0, "min"};
  if (max_seconds < 3 * 86400) return {3600.0, "h"};
  return {86400.0, "days"};
}

std::string readable_duration(double seconds) {
  const auto unit = time_unit_for(seconds);
  char text[64];
  std::snprintf(text, sizeof text, "%.1f %s", seconds / unit.seconds, unit.label.c_str());
  return text;
}

std::string figure_preamble() {
  return "set datafile missing '?'\n"
         "set grid lc rgb '#dddddd'\n"
         "set key outside right top box opaque\n"
         "set border lc rgb '#444444'\n";
}

std::string render_figure(const fs::path& dir, const Figure& f, const std::string& gnuplot) {
  std::ostringstream script;
  const auto size = std::to_string(f.width) + "," + std::to_string(f.height);
  // The body is written once per terminal: `replot` cannot repeat a multiplot.
  script << "# drift figure: " << f.title << "\n# Redraw both files with: gnuplot " << f.name << ".gp\n"
         << figure_preamble() << "\n";
  for (const char* terminal : {"pngcairo", "svg"}) {
    const bool png = terminal == std::string("pngcairo");
    script << "set terminal " << terminal << " size " << size << (png ? "" : " dynamic") << " font 'DejaVu Sans,10'\n"
           << "set termoption noenhanced\n"
           << "set output '" << f.name << (png ? ".png" : ".svg") << "'\n"
           << f.body << "\nunset output\nreset\n"
           << figure_preamble() << "\n";
  }
  write_text_file(dir / (f.name + ".gp"), script.str());
  std::fflush(nullptr);
  // Everything the child needs is made before fork: a live page is drawn while training
  // threads run, and a child of a multi-threaded process may only call async-signal-safe
  // functions (no allocation) before exec.
  const std::string log_name = f.name + ".log", script_name = f.name + ".gp";
  const pid_t pid = fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    // gnuplot takes signals as any program does, whatever the drawing thread blocks.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (chdir(dir.c_str()) != 0) _exit(126);
    const int err = open(log_name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);  // dup2's copy stays open across exec
    execl(gnuplot.c_str(), "gnuplot", script_name.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const auto log = dir / (f.name + ".log");
  std::ifstream in(log);
  std::string first_line;
  std::getline(in, first_line);
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (ok) {
    fs::remove(log);
    return "";
  }
  return f.name + ".gp: gnuplot failed" + (first_line.empty() ? "" : ": " + first_line) + " (see " + log.string() + ")";
}

}  // namespace drift
