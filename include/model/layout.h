/* layout.h: Megatron's --pipeline-model-parallel-layout as a plan property
 * (strategy.layout, strategy.layout_layers; model/strategy.h): the split
 * the search builds for interleaving over layers no other split divides,
 * the layout strings a user or a runs file gives, and their text.
 */
#ifndef PLANNER_LAYOUT_H
#define PLANNER_LAYOUT_H

#include <stddef.h>
#include "base/error.h"
#include "model/strategy.h"

/* Sets s's stages to a --pipeline-model-parallel-layout of `layers`
 * decoder layers and `mtp` MTP layers over s->pp ranks and s->vpp chunks
 * (layout_layers, s->layout on): the accounting split generalized to any
 * pp x vpp.  The embedding, the loss and each MTP layer count as one layer
 * (Megatron's unit for --account-for-*-in-pipeline-split); the U = layers +
 * 2 + mtp units are dealt over the C = pp vpp virtual stages, U / C each
 * and the U % C left over one each: whole rounds of pp to the earliest
 * chunks, a partial last round to rank 0, rank pp - 1, then ranks 1, 2, ...
 * (Megatron-Bridge's DeepSeek-V3 layouts: 61 layers, 1 MTP, pp 8 vpp 4
 * gives "Et|(tt|)*30mL"; 105 layers at pp 35 vpp 2 three decoder layers
 * on every rank, "Et|(tt|)*35(t|)*33tL").  0, or -1
 * when C > STRATEGY_MAX_CHUNKS or U < C. */
int strategy_split_layout(strategy *s, int layers, int mtp, int group);

/* Parses Megatron's layout string `text` (pipeline_parallel_layer_layout.py
 * parse_str_to_list: "E" embedding, "t" decoder layer, "m" MTP layer, "L"
 * loss, "|" between virtual stages, "(...)*n" and "x*n" repeat, "," is
 * cosmetic) for s->pp ranks into s->layout_layers, s->vpp and s->layout,
 * and checks validate_layer_layout's rules for `layers` decoder and `mtp`
 * MTP layers: the stage count a multiple of pp; "E" first and "L" last,
 * each once; the decoder and MTP counts; MTP after every decoder layer.
 * The planner also needs the MTP layers in the last virtual stage (with the
 * loss) and at most STRATEGY_MAX_CHUNKS stages.  Stages are not set (the
 * caller places them: strategy_stages_from_chunks).  PLANNER_OK, or
 * PLANNER_E_INPUT (PLANNER_E_INTERNAL out of memory) with the reason in
 * err->msg and in err->col the 1-based column of text it concerns (1 if
 * none; no line or file: the caller adds what the text is).  err may be
 * NULL. */
planner_status strategy_layout_parse(strategy *s, const char *text, int layers, int mtp,
                                     planner_error *err);

/* Writes s's layout (s->layout) as Megatron's string into buf ("Et*4|t*4|
 * ...|t*2L": stages chunk-major, "t*n" for n > 1 decoder layers, "m"/"m*n"
 * MTP layers and "L" in the last).  Returns the length it needs (like
 * snprintf), so a buffer of that + 1 holds it. */
size_t strategy_layout_format(const strategy *s, int layers, int mtp, char *buf, size_t size);

#endif
