/* The TOML bridge: the project's one C++ file (DESIGN.md, Dependencies).
 *
 * toml++ parses the document; this file turns its tree into the project's
 * bl_json tree and never lets a C++ exception cross into C. Everything past
 * this boundary works on bl_json only.
 *
 * Why toml++ is used without exceptions (TOML_EXCEPTIONS=0): a parse error
 * then comes back as a value with its source position, which is what the
 * one-line message needs. The C++ runtime may still throw (std::bad_alloc
 * from toml++'s containers), so every entry point also catches everything.
 *
 * toml++ allocates through operator new, not bl_malloc: the failure-injection
 * hook therefore covers our conversion but not toml++'s own parse. */
#define TOML_EXCEPTIONS 0
#define TOML_ENABLE_FORMATTERS 0
/* toml++ 3.3 asserts on some inputs it then rejects properly anyway (the
 * fuzzer found "[%x]": parse_key asserts a key character before checking
 * for one, and with NDEBUG the assert becomes an optimiser assumption).
 * Its asserts therefore only note the failure here; a parse that succeeds
 * after one is refused by bl_parse_inner rather than trusted. */
namespace {
thread_local bool bl_toml_assert_failed = false;
void bl_toml_note_assert_failure()
{
    bl_toml_assert_failed = true;
}
} // namespace
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : bl_toml_note_assert_failure())
#undef NDEBUG /* keeps TOML_ASSERT_ASSUME an assert, never an assumption */
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

extern "C" {
#include "brainlesslab/alloc.h"
#include "brainlesslab/file.h"
#include "brainlesslab/plan.h"
}

namespace {

/* Deeper documents are refused rather than converted: the conversion
 * recurses once per level, so a bound keeps the stack small whatever the
 * input. toml++ limits nested inline values to 256 too; dotted keys and
 * table headers ([a.b.c...]) are limited only here. */
constexpr int bl_toml_max_depth = 256;

bl_status bl_toml_oom(bl_error *err)
{
    return bl_fail(err, BL_ENOMEM, "out of memory while reading TOML");
}

bl_status bl_convert(const toml::node &node, const char *what, int depth, bl_json **out,
                     bl_error *err);

/* A table's entries in document order: toml++ keeps tables as sorted maps,
 * while Python's TOML reader (and our plain() order) follows the order in
 * which keys first appear. Every parsed key records where it was written. */
bl_status bl_convert_table(const toml::table &tbl, const char *what, int depth, bl_json **out,
                           bl_error *err)
{
    std::vector<std::pair<const toml::key *, const toml::node *>> entries;
    entries.reserve(tbl.size());
    for (auto &&[k, v] : tbl)
        entries.emplace_back(&k, &v);
    std::stable_sort(entries.begin(), entries.end(), [](const auto &a, const auto &b) {
        const toml::source_position pa = a.first->source().begin;
        const toml::source_position pb = b.first->source().begin;
        return pa.line != pb.line ? pa.line < pb.line : pa.column < pb.column;
    });
    bl_json *obj = bl_json_object();
    if (!obj)
        return bl_toml_oom(err);
    for (const auto &[key, value] : entries) {
        bl_json *child = nullptr;
        bl_status st = bl_convert(*value, what, depth + 1, &child, err);
        if (st == BL_OK) {
            const std::string_view name = key->str();
            st = bl_json_object_setn(obj, name.data(), name.size(), child, err);
        }
        if (st != BL_OK) {
            bl_json_free(obj);
            return st;
        }
    }
    *out = obj;
    return BL_OK;
}

bl_status bl_convert(const toml::node &node, const char *what, int depth, bl_json **out,
                     bl_error *err)
{
    if (depth > bl_toml_max_depth) {
        const toml::source_position p = node.source().begin;
        return bl_fail(err, BL_EVALUE, "%s:%u:%u: TOML nesting is deeper than %d levels", what,
                       (unsigned)p.line, (unsigned)p.column, bl_toml_max_depth);
    }
    bl_json *v = nullptr;
    switch (node.type()) {
    case toml::node_type::table:
        return bl_convert_table(*node.as_table(), what, depth, out, err);
    case toml::node_type::array: {
        v = bl_json_array();
        if (!v)
            return bl_toml_oom(err);
        for (const toml::node &item : *node.as_array()) {
            bl_json *child = nullptr;
            bl_status st = bl_convert(item, what, depth + 1, &child, err);
            if (st == BL_OK)
                st = bl_json_array_append(v, child, err);
            if (st != BL_OK) {
                bl_json_free(v);
                return st;
            }
        }
        *out = v;
        return BL_OK;
    }
    case toml::node_type::string: {
        const std::string &s = node.as_string()->get();
        v = bl_json_stringn(s.data(), s.size());
        break;
    }
    case toml::node_type::integer:
        v = bl_json_int(node.as_integer()->get());
        break;
    case toml::node_type::floating_point:
        /* nan and inf stay reals here; the plan layer rejects them with the
         * spec's "configuration numbers must be finite". */
        v = bl_json_real(node.as_floating_point()->get());
        break;
    case toml::node_type::boolean:
        v = bl_json_bool(node.as_boolean()->get());
        break;
    case toml::node_type::date:
        return bl_fail(err, BL_ETYPE, "unsupported configuration value: date");
    case toml::node_type::time:
        return bl_fail(err, BL_ETYPE, "unsupported configuration value: time");
    case toml::node_type::date_time:
        return bl_fail(err, BL_ETYPE, "unsupported configuration value: datetime");
    default:
        return bl_fail(err, BL_ETYPE, "unsupported configuration value: unknown");
    }
    if (!v)
        return bl_toml_oom(err);
    *out = v;
    return BL_OK;
}

/* Tears a parsed tree down without recursion. toml++'s destructors recurse
 * once per level, and a 16 MiB file of "[a.a.a...]" is millions of levels
 * deep; moving every container's contents onto a work list first leaves each
 * destructor only shallow children. */
void bl_toml_teardown(toml::table &&root)
{
    std::vector<toml::table> tables;
    std::vector<toml::array> arrays;
    tables.push_back(std::move(root));
    while (!tables.empty() || !arrays.empty()) {
        auto strip = [&](toml::node &child) {
            if (toml::table *t = child.as_table())
                tables.push_back(std::move(*t));
            else if (toml::array *a = child.as_array())
                arrays.push_back(std::move(*a));
        };
        if (!tables.empty()) {
            toml::table t = std::move(tables.back());
            tables.pop_back();
            for (auto &&[k, v] : t)
                strip(v);
        } else {
            toml::array a = std::move(arrays.back());
            arrays.pop_back();
            for (toml::node &v : a)
                strip(v);
        }
    }
}

/* A look at the raw text before toml++ sees it, for two defects of toml++
 * 3.3 that bad input can reach:
 *  - nesting: toml++ recurses once per level after parsing (source regions,
 *    destructors) and limits only inline nesting, so a header such as
 *    [a.a.a...] with millions of parts would overflow the stack inside it;
 *  - a non-ASCII character outside strings and comments (never valid TOML)
 *    can reach an "unreachable" branch of its whitespace table (found by the
 *    fuzzer with U+2E00), which is undefined behaviour.
 * The scan finds an upper bound on the nesting (every level needs a key dot,
 * a header or a bracket/brace outside strings and comments: depth of the
 * last header, plus the dots of the current key, plus the open arrays and
 * inline tables with their keys) and the first stray non-ASCII byte. */
struct bl_prescan {
    size_t depth = 0;      /* upper bound on nesting */
    size_t bad_line = 0;   /* first non-ASCII byte outside strings, 1-based */
    size_t bad_column = 0;
};

bl_prescan bl_scan(const char *s, size_t n)
{
    struct open_level {
        size_t saved; /* depth before the bracket */
        bool inline_table;
    };
    std::vector<open_level> open;
    enum { LINE, HEADER, KEY, VALUE, REST } state = LINE;
    size_t header = 0, base = 0, dots = 0, depth = 0;
    size_t line = 1, line_start = 0;
    bl_prescan r;
    for (size_t i = 0; i < n; i++) {
        const char c = s[i];
        if (c == '\n') {
            line++, line_start = i + 1;
            if (state == HEADER || state == REST || open.empty())
                state = LINE;
            continue;
        }
        if (c == '#') { /* a comment runs to the end of the line */
            while (i + 1 < n && s[i + 1] != '\n')
                i++;
            continue;
        }
        if (c == '"' || c == '\'') {
            const bool triple = i + 2 < n && s[i + 1] == c && s[i + 2] == c;
            i += triple ? 3 : 1;
            for (; i < n; i++) {
                if (s[i] == '\n') {
                    if (!triple)
                        break;
                    line++, line_start = i + 1;
                }
                if (c == '"' && s[i] == '\\') {
                    if (i + 1 < n && s[i + 1] == '\n')
                        line++, line_start = i + 2;
                    i++;
                    continue;
                }
                if (s[i] == c && (!triple || (i + 2 < n && s[i + 1] == c && s[i + 2] == c))) {
                    if (triple) /* up to two more quotes may belong to the content */
                        while (i + 3 < n && s[i + 3] == c)
                            i++;
                    i += triple ? 2 : 0;
                    break;
                }
            }
            if (i < n && s[i] == '\n')
                i--; /* let the loop count the line and end the statement */
            if (state == LINE)
                state = KEY, base = header, dots = 0;
            continue;
        }
        if (static_cast<unsigned char>(c) >= 0x80) {
            if (r.bad_line == 0) {
                size_t column = 1;
                for (size_t j = line_start; j < i; j++)
                    column += (static_cast<unsigned char>(s[j]) & 0xC0) != 0x80;
                r.bad_line = line, r.bad_column = column;
            }
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r')
            continue;
        switch (state) {
        case LINE:
            if (c == '[') { /* a header: its parts, plus one for [[...]] */
                header = 1;
                if (i + 1 < n && s[i + 1] == '[')
                    header++, i++;
                r.depth = std::max(r.depth, header);
                state = HEADER;
                break;
            }
            state = KEY, base = header, dots = 0;
            [[fallthrough]];
        case KEY:
            if (c == '.') {
                dots++;
            } else if (c == '=') {
                depth = base + dots + 1;
                r.depth = std::max(r.depth, depth);
                state = VALUE;
            } else if (c == '}' && !open.empty()) { /* an empty inline table */
                depth = open.back().saved;
                open.pop_back();
                state = VALUE;
            }
            break;
        case HEADER:
            if (c == '.')
                r.depth = std::max(r.depth, ++header);
            else if (c == ']')
                state = REST;
            break;
        case VALUE:
            if (c == '[' || c == '{') {
                open.push_back({depth, c == '{'});
                depth++;
                r.depth = std::max(r.depth, depth);
                if (c == '{')
                    state = KEY, base = depth, dots = 0;
            } else if ((c == ']' || c == '}') && !open.empty()) {
                depth = open.back().saved;
                open.pop_back();
            } else if (c == ',' && !open.empty() && open.back().inline_table) {
                depth = open.back().saved + 1;
                state = KEY, base = depth, dots = 0;
            }
            break;
        case REST:
            break;
        }
    }
    return r;
}

bl_status bl_parse_inner(const char *text, size_t len, const char *what, bl_json **out,
                         bl_error *err)
{
    const bl_prescan scan = bl_scan(text, len);
    if (scan.bad_line)
        return bl_fail(err, BL_EVALUE, "%s:%zu:%zu: unexpected non-ASCII character outside a string",
                       what, scan.bad_line, scan.bad_column);
    /* Far above the conversion's limit, so only documents it would refuse
     * anyway are refused here, yet shallow enough for toml++'s recursion. */
    if (scan.depth > 4 * bl_toml_max_depth)
        return bl_fail(err, BL_EVALUE, "%s: TOML nesting is deeper than %d levels", what,
                       bl_toml_max_depth);
    bl_toml_assert_failed = false;
    toml::parse_result res = toml::parse(std::string_view(text, len), std::string_view(what));
    if (res && bl_toml_assert_failed)
        return bl_fail(err, BL_EVALUE, "%s: the TOML reader failed an internal check", what);
    if (!res) {
        const toml::parse_error &e = res.error();
        const toml::source_position p = e.source().begin;
        /* The description is one line already; keep it so (rule 5). */
        std::string desc(e.description());
        std::replace(desc.begin(), desc.end(), '\n', ' ');
        return bl_fail(err, BL_EVALUE, "%s:%u:%u: %s", what, (unsigned)p.line,
                       (unsigned)p.column, desc.c_str());
    }
    toml::table tbl = std::move(res).table();
    bl_status st = bl_convert_table(tbl, what, 0, out, err);
    bl_toml_teardown(std::move(tbl));
    return st;
}

} // namespace

extern "C" bl_status bl_toml_parse(const char *text, size_t len, const char *what,
                                   bl_json **out, bl_error *err)
{
    BL_ASSERT(out && (text || len == 0));
    *out = nullptr;
    if (!what)
        what = "TOML text";
    try {
        return bl_parse_inner(text ? text : "", len, what, out, err);
    } catch (const std::bad_alloc &) {
        return bl_toml_oom(err);
    } catch (...) {
        return bl_fail(err, BL_ERUNTIME, "%s: unexpected failure in the TOML reader", what);
    }
}

extern "C" bl_status bl_toml_read_file(const char *path, bl_json **out, bl_error *err)
{
    BL_ASSERT(path && out);
    *out = nullptr;
    /* A plan may come from a pipe (`check <(cat plan.toml)`); the cap keeps
     * /dev/zero from filling memory. */
    char *text = nullptr;
    size_t len = 0;
    bl_status st =
        bl_file_read(path, BL_FILE_PLAN_MAX, "plan file", BL_FILE_STREAM, &text, &len, err);
    if (st == BL_OK)
        st = bl_toml_parse(text, len, path, out, err);
    bl_free(text);
    return st;
}
