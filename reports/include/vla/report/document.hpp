// The report as data: sections of prose, tables and figures, from which the
// Markdown page, the HTML page and report.json are all rendered.
//
// Every number on a page is a `Num` held in the document, so report.json (which
// serialises the document) holds every number the pages show. Prose is a
// template: `{name}` refers to a number (or short text) of the paragraph, and a
// template may not contain a free numeric literal (checked when it is built),
// so no number can reach a page without passing through the JSON.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "vla/report/plot.hpp"

namespace vla::report {

// A number as shown: the value and how many significant digits the page prints.
struct Num {
  double value = 0.0;
  int sig = 3;
  std::string unit;  // appended after a space when not empty ("s", "bits", ...)
};

// The single formatter of every number on every page (see number_format.hpp).
std::string show(const Num& n);

// A short literal (a command line, a path, a claim id, a version): shown
// verbatim in code style, exempt from the no-free-number rule, kept in the JSON
// as a string.
struct Code {
  std::string text;
};

// Text quoted verbatim from another component's output (a claim's summary in
// the ledger's words): shown as plain text, kept in the JSON as a string, and
// exempt from the no-free-number rule because its numbers are that output's.
struct Quote {
  std::string text;
};

using Cell = std::variant<std::string, Num, Code, Quote>;

struct Table {
  std::string caption;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  // Optional per-row link target (a section id); rendered on the first cell.
  std::vector<std::string> row_links;
};

// Prose with `{name}` placeholders filled from `values`.
struct Paragraph {
  std::string text;
  std::map<std::string, Cell> values;
};

struct Figure {
  Plot plot;          // rendered to figures/<plot.id>.svg and .png
  std::string caption;
};

using Block = std::variant<Paragraph, Table, Figure, Code>;

struct Section {
  std::string id;     // anchor, stable: other sections and tools link to it
  std::string title;
  std::vector<Block> blocks;
  nlohmann::json data;  // the section's numbers in machine-readable form
  std::string status = "ok";  // "ok", "partial", "unavailable"
};

struct Document {
  std::string title;
  nlohmann::json meta;  // machine, versions, date, command (strings, exempt)
  std::vector<Section> sections;
};

// Builders that enforce the no-free-number rule (std::logic_error on a violation:
// that is a bug in the report code, not bad user input).
Paragraph para(std::string text, std::map<std::string, Cell> values = {});
Cell text_cell(std::string s);

// Throws std::logic_error when `s` contains a number that is not part of an
// identifier (fp32, d_h, S_t are fine; "1000", "= 25", "1e32" are not).
void require_no_free_number(const std::string& s, const std::string& where);

// A cell as text (numbers through show(), code verbatim).
std::string cell_text(const Cell& c);

// `{name}` substitution with show() for numbers.
std::string fill(const Paragraph& p);
// The same with a renderer for the template text and for each value.
std::string fill(const Paragraph& p, const std::function<std::string(const std::string&)>& text,
                 const std::function<std::string(const Cell&)>& value);

nlohmann::json to_json(const Document& d);

// Checks titles, captions and column headers against the no-free-number rule
// (std::logic_error naming the offender).
void validate(const Document& d);

}  // namespace vla::report
