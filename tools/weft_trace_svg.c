// weft-trace: the SVG timeline (--svg) and the SVG checker (--check-svg).
//
// The picture: a time axis with ticks on top, then one lane per thread
// (labelled with its name): a row of instant marks, then its zones as
// rectangles coloured by category, one row per nesting depth; thin grey
// lines join the events of each flow (a queue op's submit, ready and
// signal). Zones narrower than a few pixels that touch are drawn as one
// rectangle (its tooltip says how many), so the file stays small for long
// traces. Every rectangle and mark has a <title> tooltip.
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "weft_trace.h"

#define SVG_WIDTH 1600.0
#define SVG_LABEL_WIDTH 230.0
#define SVG_RIGHT_MARGIN 20.0
#define SVG_AXIS_Y 44.0
#define SVG_FIRST_LANE_Y 56.0
#define SVG_ROW_HEIGHT 12.0
#define SVG_MARK_ROW_HEIGHT 9.0
#define SVG_LANE_GAP 6.0
// Zones narrower than this (pixels) that touch are merged.
#define SVG_MERGE_WIDTH 3.0
// At most this many flows are drawn (the first ones by id).
#define SVG_MAX_FLOWS 4000

static const char* const kCategoryColors[][2] = {
    {"queue", "#4e79a7"}, {"task", "#f28e2b"},      {"block", "#59a14f"},
    {"file", "#e15759"},  {"semaphore", "#b07aa1"}, {"host", "#76b7b2"},
};
static const char* const kOtherColors[] = {"#edc948", "#ff9da7", "#9c755f",
                                           "#bab0ac", "#8cd17d", "#d37295"};

static const char* category_color(const char* category) {
  for (size_t i = 0; i < sizeof(kCategoryColors) / sizeof(kCategoryColors[0]);
       ++i) {
    if (strcmp(category, kCategoryColors[i][0]) == 0) {
      return kCategoryColors[i][1];
    }
  }
  uint32_t hash = 2166136261u;
  for (const char* c = category; *c; ++c) {
    hash = (hash ^ (uint8_t)*c) * 16777619u;
  }
  return kOtherColors[hash % (sizeof(kOtherColors) / sizeof(kOtherColors[0]))];
}

// Writes |text| escaped for XML text and attribute values; control
// characters (not allowed in XML 1.0) become '?'.
static void svg_write_text(FILE* file, const char* text) {
  for (const unsigned char* c = (const unsigned char*)text; *c; ++c) {
    switch (*c) {
      case '&':
        fputs("&amp;", file);
        break;
      case '<':
        fputs("&lt;", file);
        break;
      case '>':
        fputs("&gt;", file);
        break;
      case '"':
        fputs("&quot;", file);
        break;
      case '\'':
        fputs("&apos;", file);
        break;
      default:
        fputc(*c < 0x20 ? '?' : *c, file);
        break;
    }
  }
}

// Writes a duration with a unit that suits it ("850 ns", "12.5 us").
static void format_duration(int64_t ns, char* buffer, size_t capacity) {
  if (ns < 1000) {
    snprintf(buffer, capacity, "%lld ns", (long long)ns);
  } else if (ns < 1000000) {
    snprintf(buffer, capacity, "%.3g us", (double)ns / 1e3);
  } else if (ns < 1000000000) {
    snprintf(buffer, capacity, "%.4g ms", (double)ns / 1e6);
  } else {
    snprintf(buffer, capacity, "%.4g s", (double)ns / 1e9);
  }
}

typedef struct svg_layout_t {
  const trace_t* trace;
  int64_t start_ns;
  double ns_span;
  double plot_width;
  double* lane_y;  // per thread: the top of its lane (negative: no lane)
  double height;
} svg_layout_t;

static double svg_x(const svg_layout_t* layout, int64_t ns) {
  return SVG_LABEL_WIDTH +
         (double)(ns - layout->start_ns) * layout->plot_width / layout->ns_span;
}

// A zone (or run of merged zones) waiting to be written.
typedef struct svg_pending_zone_t {
  bool valid;
  double x0, x1, y;
  const char* category;
  const char* name;
  int64_t begin_ns, end_ns;
  size_t count;
} svg_pending_zone_t;

static void svg_flush_zone(FILE* file, svg_pending_zone_t* zone) {
  if (zone->valid) {
    double width = zone->x1 - zone->x0;
    if (width < 0.5) width = 0.5;
    // Sleeping is drawn pale: the eye should find the work.
    bool sleep = zone->count == 1 && strcmp(zone->name, "sleep") == 0;
    fprintf(file,
            "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
            "fill=\"%s\"><title>",
            zone->x0, zone->y, width, SVG_ROW_HEIGHT - 1.0,
            sleep ? "#e2e2e2" : category_color(zone->category));
    char duration[32];
    format_duration(zone->end_ns - zone->begin_ns, duration, sizeof(duration));
    if (zone->count == 1) {
      svg_write_text(file, zone->name);
      fputs(" (", file);
      svg_write_text(file, zone->category);
      fprintf(file, "): %s", duration);
    } else {
      fprintf(file, "%zu zones (", zone->count);
      svg_write_text(file, zone->category);
      fputs(", the first: ", file);
      svg_write_text(file, zone->name);
      fprintf(file, ") over %s", duration);
    }
    fputs("</title></rect>\n", file);
    zone->valid = false;
  }
}

static void svg_add_zone(FILE* file, svg_pending_zone_t* pending, double x0,
                         double x1, double y, const trace_event_t* event) {
  bool merge = pending->valid && pending->category == event->category &&
               pending->x1 - pending->x0 < SVG_MERGE_WIDTH &&
               x1 - x0 < SVG_MERGE_WIDTH && x0 <= pending->x1 + 1.0;
  if (merge) {
    if (x1 > pending->x1) pending->x1 = x1;
    if (event->end_ns > pending->end_ns) pending->end_ns = event->end_ns;
    ++pending->count;
  } else {
    svg_flush_zone(file, pending);
    *pending = (svg_pending_zone_t){
        .valid = true,
        .x0 = x0,
        .x1 = x1,
        .y = y,
        .category = event->category,
        .name = event->name,
        .begin_ns = event->ts_ns,
        .end_ns = event->end_ns,
        .count = 1,
    };
  }
}

static void svg_write_mark(FILE* file, double x, double y,
                           const trace_event_t* event, size_t more) {
  fprintf(file, "<path d=\"M%.2f %.1fl-3 %.1fh6z\" fill=\"%s\"><title>", x, y,
          SVG_MARK_ROW_HEIGHT - 2.0, category_color(event->category));
  svg_write_text(file, event->name);
  fputs(" (", file);
  svg_write_text(file, event->category);
  fputc(')', file);
  if (event->has_value) {
    fprintf(file, " value %llu", (unsigned long long)event->value);
  }
  if (event->has_id) fprintf(file, " id %llu", (unsigned long long)event->id);
  if (more > 0) fprintf(file, " and %zu more here", more);
  fputs("</title></path>\n", file);
}

static void svg_write_lane(FILE* file, const svg_layout_t* layout,
                           uint32_t thread_index, svg_pending_zone_t* pending) {
  const trace_t* trace = layout->trace;
  const trace_thread_t* thread = &trace->threads[thread_index];
  double top = layout->lane_y[thread_index];
  double rows = thread->max_depth > 0 ? thread->max_depth : 1;
  double height = SVG_MARK_ROW_HEIGHT + rows * SVG_ROW_HEIGHT;
  fprintf(file,
          "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" "
          "fill=\"%s\"/>\n",
          top - SVG_LANE_GAP / 2, SVG_WIDTH, height + SVG_LANE_GAP,
          thread_index % 2 ? "#ffffff" : "#f4f4f4");
  char label[160];
  trace_thread_label(trace, thread_index, label, sizeof(label));
  fprintf(file,
          "<text x=\"8\" y=\"%.1f\" font-size=\"11\" "
          "font-family=\"sans-serif\">",
          top + SVG_MARK_ROW_HEIGHT + 9.0);
  svg_write_text(file, label);
  fputs("</text>\n", file);
  for (uint32_t d = 0; d < thread->max_depth; ++d) pending[d].valid = false;
  const trace_event_t* mark = NULL;
  double mark_x = -1.0;
  size_t mark_more = 0;
  for (uint32_t p = 0; p < thread->event_count; ++p) {
    const trace_event_t* event = &trace->events[thread->events[p]];
    if (event->phase == 'B' || event->phase == 'X') {
      double x0 = svg_x(layout, event->ts_ns);
      double x1 = svg_x(layout, event->end_ns);
      double y = top + SVG_MARK_ROW_HEIGHT + event->depth * SVG_ROW_HEIGHT;
      svg_add_zone(file, &pending[event->depth], x0, x1, y, event);
    } else if (event->phase == 'i') {
      double x = svg_x(layout, event->ts_ns);
      if (mark && x - mark_x < 2.0) {
        ++mark_more;
      } else {
        if (mark) svg_write_mark(file, mark_x, top, mark, mark_more);
        mark = event;
        mark_x = x;
        mark_more = 0;
      }
    }
  }
  if (mark) svg_write_mark(file, mark_x, top, mark, mark_more);
  for (uint32_t d = 0; d < thread->max_depth; ++d) {
    svg_flush_zone(file, &pending[d]);
  }
}

// Picks a tick step of 1, 2 or 5 times a power of ten giving ~10 ticks.
static double svg_tick_step(double span_ns) {
  double raw = span_ns / 10.0;
  double power = pow(10.0, floor(log10(raw > 1.0 ? raw : 1.0)));
  double step = power;
  if (raw / power > 5.0) {
    step = 10.0 * power;
  } else if (raw / power > 2.0) {
    step = 5.0 * power;
  } else if (raw / power > 1.0) {
    step = 2.0 * power;
  }
  return step;
}

static void svg_write_axis(FILE* file, const svg_layout_t* layout) {
  double right = SVG_LABEL_WIDTH + layout->plot_width;
  fprintf(file,
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
          "stroke=\"#333\"/>\n",
          SVG_LABEL_WIDTH, SVG_AXIS_Y, right, SVG_AXIS_Y);
  double step = svg_tick_step(layout->ns_span);
  for (double t = 0.0; t <= layout->ns_span + 0.5; t += step) {
    double x = svg_x(layout, layout->start_ns + (int64_t)t);
    char label[32];
    format_duration((int64_t)llround(t), label, sizeof(label));
    fprintf(file,
            "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
            "stroke=\"#333\"/>\n"
            "<line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" "
            "stroke=\"#ddd\" stroke-width=\"0.5\"/>\n"
            "<text x=\"%.2f\" y=\"%.1f\" font-size=\"10\" "
            "font-family=\"sans-serif\" text-anchor=\"middle\">%s</text>\n",
            x, SVG_AXIS_Y - 4.0, x, SVG_AXIS_Y + 4.0, x, SVG_AXIS_Y + 4.0, x,
            layout->height - 30.0, x, SVG_AXIS_Y - 7.0, t == 0.0 ? "0" : label);
  }
}

static void svg_write_flows(FILE* file, const svg_layout_t* layout) {
  const trace_t* trace = layout->trace;
  size_t count = 0;
  uint32_t* flows = trace_collect_by_id(trace, trace_is_flow_event, &count);
  size_t drawn = 0;
  for (size_t i = 0; i < count && drawn < SVG_MAX_FLOWS;) {
    size_t end = i;
    uint64_t id = trace->events[flows[i]].id;
    while (end < count && trace->events[flows[end]].id == id) ++end;
    if (end - i >= 2) {
      fputs(
          "<polyline fill=\"none\" stroke=\"#555\" stroke-opacity=\"0.4\" "
          "stroke-width=\"0.7\" points=\"",
          file);
      for (size_t j = i; j < end; ++j) {
        const trace_event_t* event = &trace->events[flows[j]];
        double y = layout->lane_y[event->thread] + SVG_MARK_ROW_HEIGHT +
                   (event->depth > 0 ? event->depth - 1 : 0) * SVG_ROW_HEIGHT +
                   SVG_ROW_HEIGHT / 2;
        fprintf(file, "%s%.2f,%.1f", j == i ? "" : " ",
                svg_x(layout, event->ts_ns), y);
      }
      fprintf(file, "\"><title>flow %llu</title></polyline>\n",
              (unsigned long long)id);
      ++drawn;
    }
    i = end;
  }
  free(flows);
}

static void svg_write_legend(FILE* file, const svg_layout_t* layout) {
  const trace_t* trace = layout->trace;
  const char* seen[16];
  size_t seen_count = 0;
  for (size_t i = 0; i < trace->event_count && seen_count < 16; ++i) {
    const trace_event_t* event = &trace->events[i];
    if (event->phase != 'B' && event->phase != 'X' && event->phase != 'i') {
      continue;
    }
    bool known = false;
    for (size_t s = 0; s < seen_count && !known; ++s) {
      known = strcmp(seen[s], event->category) == 0;
    }
    if (!known) seen[seen_count++] = event->category;
  }
  double x = SVG_LABEL_WIDTH;
  double y = layout->height - 16.0;
  for (size_t s = 0; s < seen_count; ++s) {
    fprintf(file,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" "
            "fill=\"%s\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
            "font-family=\"sans-serif\">",
            x, y - 9.0, category_color(seen[s]), x + 16.0, y);
    svg_write_text(file, seen[s][0] ? seen[s] : "(no category)");
    fputs("</text>\n", file);
    x += 24.0 + 7.0 * (double)strlen(seen[s][0] ? seen[s] : "(no category)");
  }
}

bool trace_write_svg(const trace_t* trace, FILE* file) {
  svg_layout_t layout = {
      .trace = trace,
      .start_ns = trace->min_ns,
      .ns_span = trace->max_ns > trace->min_ns
                     ? (double)(trace->max_ns - trace->min_ns)
                     : 1.0,
      .plot_width = SVG_WIDTH - SVG_LABEL_WIDTH - SVG_RIGHT_MARGIN,
  };
  layout.lane_y = (double*)calloc(trace->thread_count + 1, sizeof(double));
  uint32_t max_depth = 1;
  double y = SVG_FIRST_LANE_Y;
  for (uint32_t t = 0;
       trace->thread_count && layout.lane_y && t < trace->thread_count; ++t) {
    const trace_thread_t* thread = &trace->threads[t];
    if (thread->event_count == 0) {
      layout.lane_y[t] = -1.0;
      continue;
    }
    layout.lane_y[t] = y;
    uint32_t rows = thread->max_depth > 0 ? thread->max_depth : 1;
    if (rows > max_depth) max_depth = rows;
    y += SVG_MARK_ROW_HEIGHT + rows * SVG_ROW_HEIGHT + SVG_LANE_GAP;
  }
  layout.height = y + 40.0;
  svg_pending_zone_t* pending =
      (svg_pending_zone_t*)calloc(max_depth, sizeof(svg_pending_zone_t));
  bool ok = layout.lane_y && pending;
  if (!ok) {
    fprintf(stderr, "weft-trace: out of memory laying out the SVG\n");
  } else {
    fprintf(file,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n",
            SVG_WIDTH, layout.height, SVG_WIDTH, layout.height);
    fprintf(file,
            "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" "
            "fill=\"#ffffff\"/>\n",
            SVG_WIDTH, layout.height);
    fputs(
        "<text x=\"8\" y=\"18\" font-size=\"13\" font-family=\"sans-serif\" "
        "font-weight=\"bold\">weft trace: ",
        file);
    svg_write_text(file, trace->path);
    char span[32];
    format_duration(trace->max_ns - trace->min_ns, span, sizeof(span));
    fprintf(file, " (%zu events, %u threads, %s)</text>\n", trace->event_count,
            trace->thread_count, span);
    svg_write_axis(file, &layout);
    for (uint32_t t = 0; t < trace->thread_count; ++t) {
      if (layout.lane_y[t] >= 0.0) svg_write_lane(file, &layout, t, pending);
    }
    svg_write_flows(file, &layout);
    svg_write_legend(file, &layout);
    fputs("</svg>\n", file);
    if (ferror(file)) {
      fprintf(stderr, "weft-trace: writing the SVG failed: %s\n",
              strerror(errno));
      ok = false;
    }
  }
  free(pending);
  free(layout.lane_y);
  return ok;
}

//===----------------------------------------------------------------------===//
// --check-svg: a minimal XML well-formedness check
//===----------------------------------------------------------------------===//

typedef struct svg_parser_t {
  const char* path;
  const char* text;
  size_t length;
  size_t position;
  char problem[256];
} svg_parser_t;

static size_t svg_line(const svg_parser_t* parser) {
  size_t line = 1;
  for (size_t i = 0; i < parser->position && i < parser->length; ++i) {
    line += parser->text[i] == '\n';
  }
  return line;
}

static void svg_fail(svg_parser_t* parser, const char* message) {
  if (!parser->problem[0]) {
    snprintf(parser->problem, sizeof(parser->problem), "%s", message);
  }
}

static bool svg_starts(const svg_parser_t* parser, const char* prefix) {
  size_t length = strlen(prefix);
  return parser->position + length <= parser->length &&
         memcmp(parser->text + parser->position, prefix, length) == 0;
}

// Moves past |terminator|; false when it never comes.
static bool svg_skip_past(svg_parser_t* parser, const char* terminator) {
  const char* found = strstr(parser->text + parser->position, terminator);
  bool ok = found != NULL;
  if (ok)
    parser->position = (size_t)(found - parser->text) + strlen(terminator);
  return ok;
}

static bool svg_is_name_start(char c) {
  return isalpha((unsigned char)c) || c == '_' || c == ':';
}

static bool svg_is_name_char(char c) {
  return svg_is_name_start(c) || isdigit((unsigned char)c) || c == '-' ||
         c == '.';
}

// Reads a name at the cursor into |out| (truncated); false when none.
static bool svg_read_name(svg_parser_t* parser, char* out, size_t capacity) {
  size_t start = parser->position;
  if (start >= parser->length || !svg_is_name_start(parser->text[start])) {
    return false;
  }
  while (parser->position < parser->length &&
         svg_is_name_char(parser->text[parser->position])) {
    ++parser->position;
  }
  size_t length = parser->position - start;
  if (length >= capacity) length = capacity - 1;
  memcpy(out, parser->text + start, length);
  out[length] = '\0';
  return true;
}

static void svg_skip_space(svg_parser_t* parser) {
  while (parser->position < parser->length &&
         isspace((unsigned char)parser->text[parser->position])) {
    ++parser->position;
  }
}

// Checks the entity reference at the cursor ('&') and moves past it.
static bool svg_check_entity(svg_parser_t* parser) {
  static const char* const kEntities[] = {"&amp;", "&lt;", "&gt;", "&quot;",
                                          "&apos;"};
  bool ok = false;
  for (size_t i = 0; i < sizeof(kEntities) / sizeof(kEntities[0]) && !ok; ++i) {
    if (svg_starts(parser, kEntities[i])) {
      parser->position += strlen(kEntities[i]);
      ok = true;
    }
  }
  if (!ok && svg_starts(parser, "&#")) {
    size_t p = parser->position + 2;
    bool hex = p < parser->length && parser->text[p] == 'x';
    if (hex) ++p;
    size_t digits = 0;
    while (p < parser->length &&
           (hex ? isxdigit((unsigned char)parser->text[p])
                : isdigit((unsigned char)parser->text[p]))) {
      ++p;
      ++digits;
    }
    ok = digits > 0 && p < parser->length && parser->text[p] == ';';
    if (ok) parser->position = p + 1;
  }
  if (!ok) svg_fail(parser, "'&' that starts no entity reference");
  return ok;
}

typedef struct svg_counts_t {
  size_t elements;
  size_t rects;
  bool root_seen;
  bool root_closed;
} svg_counts_t;

// Parses a start tag at the cursor ('<' name ...); pushes it unless it
// closes itself. Returns false on a problem.
// Parses one attribute (name="value") at the cursor; notes whether it is
// the SVG namespace declaration.
static bool svg_parse_attribute(svg_parser_t* parser, bool* has_xmlns) {
  char attribute[64];
  bool ok = svg_read_name(parser, attribute, sizeof(attribute));
  if (!ok) {
    svg_fail(parser, "a malformed attribute (or an unterminated tag)");
  } else {
    svg_skip_space(parser);
    ok = svg_starts(parser, "=");
    if (!ok) svg_fail(parser, "an attribute without '='");
  }
  char quote = '\0';
  if (ok) {
    ++parser->position;
    svg_skip_space(parser);
    quote = parser->position < parser->length ? parser->text[parser->position]
                                              : '\0';
    ok = quote == '"' || quote == '\'';
    if (!ok) svg_fail(parser, "an attribute value without quotes");
  }
  size_t value_start = parser->position + 1;
  if (ok) ++parser->position;
  while (ok && parser->position < parser->length &&
         parser->text[parser->position] != quote) {
    char c = parser->text[parser->position];
    if (c == '<') {
      svg_fail(parser, "'<' inside an attribute value");
      ok = false;
    } else if (c == '&') {
      ok = svg_check_entity(parser);
    } else {
      ++parser->position;
    }
  }
  if (ok && parser->position >= parser->length) {
    svg_fail(parser, "an attribute value that never ends");
    ok = false;
  }
  if (ok) {
    if (strcmp(attribute, "xmlns") == 0) {
      static const char kNamespace[] = "http://www.w3.org/2000/svg";
      *has_xmlns = parser->position - value_start == strlen(kNamespace) &&
                   memcmp(parser->text + value_start, kNamespace,
                          strlen(kNamespace)) == 0;
    }
    ++parser->position;  // the closing quote
  }
  return ok;
}

static bool svg_parse_start_tag(svg_parser_t* parser, char (*stack)[64],
                                size_t* depth, size_t max_depth,
                                svg_counts_t* counts) {
  ++parser->position;  // '<'
  char name[64];
  bool root = *depth == 0;
  bool ok = svg_read_name(parser, name, sizeof(name));
  if (!ok) {
    svg_fail(parser, "'<' not followed by an element name");
  } else if (root && counts->root_closed) {
    svg_fail(parser, "a second root element");
    ok = false;
  } else if (root && strcmp(name, "svg") != 0) {
    svg_fail(parser, "the root element is not <svg>");
    ok = false;
  }
  bool has_xmlns = false;
  bool closed = false;
  bool done = !ok;
  while (!done) {
    svg_skip_space(parser);
    if (svg_starts(parser, "/>")) {
      parser->position += 2;
      closed = true;
      done = true;
    } else if (svg_starts(parser, ">")) {
      ++parser->position;
      done = true;
    } else {
      ok = svg_parse_attribute(parser, &has_xmlns);
      done = !ok;
    }
  }
  if (ok && root && !has_xmlns) {
    svg_fail(parser,
             "the root <svg> has no xmlns=\"http://www.w3.org/2000/svg\"");
    ok = false;
  }
  if (ok) {
    ++counts->elements;
    counts->rects += strcmp(name, "rect") == 0;
    counts->root_seen = true;
    if (closed) {
      if (root) counts->root_closed = true;
    } else if (*depth == max_depth) {
      svg_fail(parser, "elements nested too deeply");
      ok = false;
    } else {
      memcpy(stack[(*depth)++], name, sizeof(name));
    }
  }
  return ok;
}

static bool svg_parse_end_tag(svg_parser_t* parser, char (*stack)[64],
                              size_t* depth, svg_counts_t* counts) {
  parser->position += 2;  // "</"
  char name[64];
  bool ok = svg_read_name(parser, name, sizeof(name));
  if (!ok) {
    svg_fail(parser, "'</' not followed by an element name");
  } else {
    svg_skip_space(parser);
    ok = svg_starts(parser, ">");
    if (!ok) svg_fail(parser, "an end tag without '>'");
  }
  if (ok && (*depth == 0 || strcmp(stack[*depth - 1], name) != 0)) {
    char message[200];
    snprintf(message, sizeof(message), "</%s> does not close the open <%s>",
             name, *depth ? stack[*depth - 1] : "(nothing)");
    svg_fail(parser, message);
    ok = false;
  }
  if (ok) {
    ++parser->position;
    if (--*depth == 0) counts->root_closed = true;
  }
  return ok;
}

// Checks |text| (|length| bytes of |path|); returns the exit code.
static int svg_check_text(const char* path, const char* text, size_t length) {
  svg_parser_t parser = {.path = path, .text = text, .length = length};
  enum { kMaxDepth = 64 };
  char stack[kMaxDepth][64];
  size_t depth = 0;
  svg_counts_t counts = {0};
  bool ok = true;
  if (strlen(text) != length) {
    svg_fail(&parser, "a NUL byte in the file");
    ok = false;
  }
  while (ok && parser.position < length) {
    char c = text[parser.position];
    if (c == '<') {
      if (svg_starts(&parser, "<?")) {
        ok = svg_skip_past(&parser, "?>");
        if (!ok) svg_fail(&parser, "a processing instruction never ends");
      } else if (svg_starts(&parser, "<!--")) {
        ok = svg_skip_past(&parser, "-->");
        if (!ok) svg_fail(&parser, "a comment never ends");
      } else if (svg_starts(&parser, "<![CDATA[")) {
        ok = depth > 0 && svg_skip_past(&parser, "]]>");
        if (!ok) svg_fail(&parser, "CDATA outside the root or never ending");
      } else if (svg_starts(&parser, "<!")) {
        ok = !counts.root_seen && svg_skip_past(&parser, ">");
        if (!ok) svg_fail(&parser, "a declaration after the root element");
      } else if (svg_starts(&parser, "</")) {
        ok = svg_parse_end_tag(&parser, stack, &depth, &counts);
      } else {
        ok = svg_parse_start_tag(&parser, stack, &depth, kMaxDepth, &counts);
      }
    } else if (c == '&') {
      ok = svg_check_entity(&parser);
      if (ok && depth == 0) {
        svg_fail(&parser, "text outside the root element");
        ok = false;
      }
    } else {
      if (depth == 0 && !isspace((unsigned char)c)) {
        svg_fail(&parser, "text outside the root element");
        ok = false;
      }
      ++parser.position;
    }
  }
  if (ok && !counts.root_seen) {
    svg_fail(&parser, "no root element (empty document)");
    ok = false;
  } else if (ok && depth > 0) {
    char message[128];
    snprintf(message, sizeof(message), "<%s> is never closed",
             stack[depth - 1]);
    svg_fail(&parser, message);
    ok = false;
  } else if (ok && counts.rects == 0) {
    svg_fail(&parser, "no <rect> element (an empty picture)");
    ok = false;
  }
  int code = 0;
  if (!ok) {
    fprintf(stderr, "weft-trace: '%s' line %zu: not a well-formed SVG: %s\n",
            path, svg_line(&parser), parser.problem);
    code = 1;
  } else {
    printf("weft-trace: '%s': well-formed SVG: %zu elements, %zu rects\n", path,
           counts.elements, counts.rects);
  }
  return code;
}

int trace_check_svg(const char* path) {
  size_t length = 0;
  char* text = trace_read_file(path, &length);
  int code = 1;
  if (text) {
    code = svg_check_text(path, text, length);
    free(text);
  }
  return code;
}
