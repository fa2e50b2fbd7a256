#include <sstream>

#include "vla/report/render.hpp"

namespace vla::report {

namespace {

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|' || c == '*' || c == '<' || c == '>') o += '\\';
    o += c;
  }
  return o;
}

std::string md_cell(const Cell& c) {
  if (const auto* code = std::get_if<Code>(&c)) return "`" + code->text + "`";
  return md_escape(cell_text(c));
}

void table(std::ostringstream& m, const Table& t) {
  if (!t.caption.empty()) m << "**" << md_escape(t.caption) << "**\n\n";
  m << "|";
  for (const auto& c : t.columns) m << ' ' << md_escape(c) << " |";
  m << "\n|";
  for (std::size_t i = 0; i < t.columns.size(); ++i) m << " --- |";
  m << "\n";
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    m << "|";
    for (std::size_t i = 0; i < t.rows[r].size(); ++i) {
      std::string cell = md_cell(t.rows[r][i]);
      if (i == 0 && r < t.row_links.size() && !t.row_links[r].empty()) cell = "[" + cell + "](#" + t.row_links[r] + ")";
      m << ' ' << cell << " |";
    }
    m << "\n";
  }
  m << "\n";
}

}  // namespace

std::string render_markdown(const Document& d) {
  std::ostringstream m;
  m << "# " << md_escape(d.title) << "\n\n";
  m << "Contents:";
  for (std::size_t i = 0; i < d.sections.size(); ++i) {
    m << (i ? " ·" : "") << " [" << md_escape(d.sections[i].title) << "](#" << d.sections[i].id << ")";
  }
  m << "\n\n";
  for (const auto& s : d.sections) {
    m << "<a id=\"" << s.id << "\"></a>\n\n## " << md_escape(s.title) << "\n\n";
    for (const auto& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        m << fill(*p, md_escape, md_cell) << "\n\n";
      } else if (const auto* t = std::get_if<Table>(&b)) {
        table(m, *t);
      } else if (const auto* f = std::get_if<Figure>(&b)) {
        m << "![" << md_escape(f->caption) << "](figures/" << f->plot.id << ".svg)\n\n";
        m << "*" << md_escape(f->caption) << "* ([PNG](figures/" << f->plot.id << ".png))\n\n";
      } else {
        m << "```\n" << std::get<Code>(b).text << "\n```\n\n";
      }
    }
  }
  return m.str();
}

}  // namespace vla::report
