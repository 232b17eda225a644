// The merge of every CPU's records by time stamp (merge.h). Its parts:
// data_file.cc reads the file, chunk_pipeline.cc decompresses chunks ahead
// on a helper thread, cpu_cursor.cc walks one CPU's pages, and this file
// picks the next record across CPUs and buffers.
#include "framework/decode/merge.h"

#include <algorithm>
#include <system_error>

#include "framework/base/cpus.h"
#include "framework/decode/chunk_pipeline.h"
#include "framework/decode/cpu_cursor.h"

namespace tracebed::decode {

namespace {

class MergedStream final : public EventStream {
 public:
  explicit MergedStream(StreamSetup setup) : setup_(std::move(setup)) {}

  Status init() {
    bool compressed = false;
    for (const auto& buffer : setup_.buffers)
      for (const CpuSpan& span : buffer) compressed = compressed || span.compressed;
    std::vector<std::vector<size_t>> lanes(setup_.buffers.size());
    if (compressed && setup_.prefetch_chunks.value_or(base::usable_cpus() > 1)) {
      uint64_t chunk_bytes = 0;  // one average chunk of every CPU
      for (const auto& buffer : setup_.buffers)
        for (const CpuSpan& span : buffer)
          if (span.compressed && span.chunks) chunk_bytes += span.data_size / span.chunks;
      pipeline_ =
          std::make_unique<ChunkPipeline>(setup_.codec, setup_.file.get(), setup_.layout.endian, chunk_bytes);
      for (size_t b = 0; b < setup_.buffers.size(); ++b)
        for (const CpuSpan& span : setup_.buffers[b]) {
          const bool has_chunks = span.compressed && span.chunk_at && span.chunk_at->size() == span.chunks;
          lanes[b].push_back(has_chunks ? pipeline_->add_lane(span, span.page_size ? span.page_size : setup_.page_size)
                                        : kNoLane);
        }
      try {
        pipeline_->start();
      } catch (const std::system_error&) {
        // No thread to be had: every cursor decompresses its own chunks.
        pipeline_.reset();
      }
    }
    size_t cursors = 0;
    for (const auto& buffer : setup_.buffers) cursors += buffer.size();
    for (size_t b = 0; b < setup_.buffers.size(); ++b) {
      const size_t begin = cursors_.size();
      for (size_t i = 0; i < setup_.buffers[b].size(); ++i) {
        const size_t lane = pipeline_ ? lanes[b][i] : kNoLane;
        cursors_.push_back(std::make_unique<CpuCursor>(setup_, setup_.buffers[b][i], static_cast<uint16_t>(b), i,
                                                       lane == kNoLane ? nullptr : pipeline_.get(), lane, cursors));
      }
      ranges_.push_back({begin, cursors_.size()});
    }
    // Every CPU is merged, even those outside the filter: `trace-cmd report
    // --cpu` reads them too and only leaves them out of the output, which is
    // visible where function_graph peeks at the next record (fixture s4).
    for (auto& c : cursors_) {
      if (!c->prime() && c->error()) return located(*c->error());
      active_.push_back(c.get());
      shown_.push_back(!setup_.cpus || setup_.cpus->count(c->cpu()));
    }
    linear_ = active_.size() <= setup_.linear_max;
    n_ = static_cast<uint32_t>(active_.size());
    ts_.resize(n_);
    done_.resize(n_);
    for (uint32_t i = 0; i < n_; ++i) refresh(i);
    leaves_ = 1;
    while (leaves_ < n_) leaves_ *= 2;
    build();
    if (const TraceContext* ctx = setup_.context)
      if (const Field* f = ctx->common_type(); f && f->size >= 1 && f->size <= 8) type_end_ = f->offset + f->size;
    return {};
  }

  Result<bool> next(Record& out) override {
    peeked_ = nullptr;
    if (pending_) return *pending_;
    const Step s = step([&](const Record& r) {
      out = r;
      return true;
    });
    if (s.failed) return located(*s.failed->error());
    return s.took;
  }

  Status for_each(const std::function<bool(const Record&)>& visit) override {
    peeked_ = nullptr;
    visiting_ = true;
    struct Done {
      bool& flag;
      ~Done() { flag = false; }
    } done{visiting_};
    for (;;) {
      if (pending_) return *pending_;  // the cursor of the record just visited failed
      const Step s = step(visit);
      if (s.failed) return located(*s.failed->error());
      if (!s.took || !s.go) return {};  // done, or the visitor stopped (an error then waits in pending_)
    }
  }

  const DecodeStats& stats() const override { return stats_; }

  Result<const Record*> peek_next_in_buffer() override {
    if (visiting_) return Error{"peek_next_in_buffer: called from inside for_each, whose record is not yet consumed"};
    peeked_ = nullptr;
    if (last_buffer_ < 0) return static_cast<const Record*>(nullptr);
    const auto [begin, end] = ranges_[last_buffer_];
    CpuCursor* best = nullptr;
    for (size_t i = begin; i < end; ++i) {
      CpuCursor* c = cursors_[i].get();
      if (c->done()) continue;
      if (!best || c->head().ts < best->head().ts) best = c;
    }
    if (!best) return static_cast<const Record*>(nullptr);
    peeked_ = best;
    peeked_index_ = static_cast<uint32_t>(std::find(active_.begin(), active_.end(), best) - active_.begin());
    peeked_copy_ = best->head();
    if (const TraceContext* ctx = setup_.context) peeked_copy_.event = ctx->event_of(peeked_copy_.data);
    return static_cast<const Record*>(&peeked_copy_);
  }

  void consume_peeked() override {
    if (!peeked_) return;
    CpuCursor* c = peeked_;
    peeked_ = nullptr;
    if (!c->advance() && c->error() && !pending_) pending_ = located(*c->error());
    refresh(peeked_index_);
    if (!linear_) {
      const bool was_winner = tree_[0] == peeked_index_;
      if (was_winner)
        replay(peeked_index_);
      else
        build();  // a record of another buffer than the winner's: rare, rebuild
    }
    ++stats_.events;
  }

 private:
  // A tournament (loser) tree over the cursors orders them by (next stamp,
  // index): the same winner as trace-cmd's linear scan (smallest stamp,
  // lowest index on ties) in log2(cpus) comparisons per record.
  static constexpr uint32_t kNone = ~0u;
  static constexpr uint64_t kDoneStamp = ~uint64_t{0};
  static constexpr size_t kNoLane = ~size_t{0};

  // One step of the merge, shared by next() and for_each(): the earliest
  // record of a shown CPU goes to `take` (which says whether to go on)
  // while it is still in its cursor, then that cursor moves on; an error
  // doing so is kept in pending_, for the next call, since the record was
  // taken. A hidden CPU's record is skipped, and its cursor's error is
  // `failed`. Bounded: every pass takes or skips a record.
  struct Step {
    bool took = false;
    bool go = true;
    CpuCursor* failed = nullptr;
  };
  template <typename Take>
  [[gnu::always_inline]] Step step(Take&& take) {
    for (;;) {
      const uint32_t i = earliest();
      if (i == kNone) return {};
      CpuCursor* best = active_[i];
      if (shown_[i]) {
        Record& r = best->head();
        last_buffer_ = best->buffer();
        count(r);
        const bool go = take(r);
        if (!best->advance() && best->error()) pending_ = located(*best->error());
        moved(i);
        return {true, go, nullptr};
      }
      const bool ok = best->advance() || !best->error();
      moved(i);
      if (!ok) return {false, true, best};
    }
  }

  // The cursor whose record comes next, or kNone when all are done.
  [[gnu::always_inline]] uint32_t earliest() {
    if (linear_) {
      // A CPU's records come in runs: while the last winner's next stamp
      // still comes before every other cursor's (which have not moved),
      // it wins again without a scan.
      if (streak_ != kNone) {
        const uint64_t t = ts_[streak_];
        if (t != kDoneStamp && (t < runner_up_ts_ || (t == runner_up_ts_ && streak_ < runner_up_)))
          return streak_;
      }
      // Few CPUs: trace-cmd's own scan is cheaper than keeping the tree.
      // It reads the stamps side by side, a finished cursor's as
      // kDoneStamp, so the lowest index wins ties without a test of done.
      if (n_ == 0) return kNone;
      const uint64_t* ts = ts_.data();
      uint32_t i = 0, second = kNone;
      uint64_t best_ts = ts[0], second_ts = kDoneStamp;
      for (uint32_t k = 1; k < n_; ++k) {
        if (ts[k] < best_ts) {
          second_ts = best_ts;
          second = i;
          best_ts = ts[k];
          i = k;
        } else if (ts[k] < second_ts) {
          second_ts = ts[k];
          second = k;
        }
      }
      if (best_ts != kDoneStamp) {
        streak_ = i;
        runner_up_ts_ = second_ts;
        runner_up_ = second;
      }
      if (best_ts == kDoneStamp) {
        // Every cursor done, or the earliest stamp left is kDoneStamp
        // itself: the first cursor not done is trace-cmd's choice.
        i = 0;
        while (i < n_ && done_[i]) ++i;
        if (i == n_) return kNone;
      }
      return i;
    }
    const uint32_t i = tree_[0];
    return i >= n_ || done_[i] ? kNone : i;
  }

  bool before(uint32_t a, uint32_t b) const {
    const bool a_out = a >= n_ || done_[a];
    const bool b_out = b >= n_ || done_[b];
    if (a_out || b_out) return !a_out;
    return ts_[a] < ts_[b] || (ts_[a] == ts_[b] && a < b);
  }

  void refresh(uint32_t i) {
    if (i != streak_) streak_ = kNone;  // a cursor other than the streak's moved
    done_[i] = active_[i]->done();
    ts_[i] = done_[i] ? kDoneStamp : active_[i]->head().ts;
  }

  void build() {
    tree_.assign(leaves_, kNone);
    std::vector<uint32_t> win(2 * leaves_);
    for (uint32_t i = 0; i < leaves_; ++i) win[leaves_ + i] = i;  // ids >= n_ are empty leaves
    for (uint32_t node = leaves_ - 1; node >= 1; --node) {
      const uint32_t l = win[2 * node], r = win[2 * node + 1];
      const bool left = before(l, r) || (!before(r, l) && l < r);
      win[node] = left ? l : r;
      tree_[node] = left ? r : l;
    }
    tree_[0] = win[1];
  }

  // The winner's stamp changed: play its path to the root again.
  void replay(uint32_t i) {
    uint32_t winner = i;
    for (uint32_t node = (i + leaves_) >> 1; node >= 1; node >>= 1)
      if (before(tree_[node], winner)) std::swap(tree_[node], winner);
    tree_[0] = winner;
  }

  // Cursor i advanced (or ended).
  void moved(uint32_t i) {
    refresh(i);
    if (!linear_) replay(i);
  }

  // Errors name the file first, like TraceDat::open's.
  Error located(const Error& e) const { return e.within(setup_.file->path()); }

  // Counts the record about to be shown, and looks its format up for
  // whoever reads it.
  void count(Record& r) {
    ++stats_.events;
    if (r.missed_events) {
      ++stats_.pages_with_missed;
      if (r.missed_events != kMissedUnknown) stats_.missed_events += r.missed_events;
    }
    if (!type_end_) return;  // no context, or one without a usable common_type
    r.event = setup_.context->event_of(r.data);
    if (!r.event && r.data.size() >= type_end_) ++stats_.unknown_events;
  }

  StreamSetup setup_;
  std::vector<std::unique_ptr<CpuCursor>> cursors_;   // every CPU of every buffer, in trace-cmd's order
  std::vector<std::pair<size_t, size_t>> ranges_;     // cursors of each buffer
  std::vector<CpuCursor*> active_;                    // every cursor, in merge order
  std::vector<uint8_t> shown_;                        // active_[i] is in the cpus filter
  int last_buffer_ = -1;
  CpuCursor* peeked_ = nullptr;
  uint32_t peeked_index_ = 0;
  Record peeked_copy_;
  bool linear_ = true;
  uint32_t n_ = 0;               // cursors
  uint32_t leaves_ = 1;          // n_ rounded up to a power of two
  std::vector<uint32_t> tree_;   // [0] the winner, [1..] the loser of each match
  std::vector<uint64_t> ts_;     // each cursor's next stamp, kept beside the tree
  std::vector<uint8_t> done_;    // each cursor has no more records
  // Linear scan: the last winner, and the earliest of the others (stamp,
  // then index), which stand still while only the winner moves.
  uint32_t streak_ = kNone;
  uint32_t runner_up_ = kNone;
  uint64_t runner_up_ts_ = kDoneStamp;
  std::optional<Error> pending_;  // reported by the next call, after the record already returned
  bool visiting_ = false;         // inside for_each
  DecodeStats stats_;
  uint32_t type_end_ = 0;  // end of common_type in a record; 0: unknown events are not counted
  // Last, so its helper stops (finishing the chunk in hand) before the
  // cursors that take its chunks go away.
  std::unique_ptr<ChunkPipeline> pipeline_;
};

}  // namespace

Result<std::unique_ptr<EventStream>> make_event_stream(StreamSetup setup) {
  if (setup.page_size < setup.layout.header_size())
    return Error{fmt::format("sub-buffer size {} is smaller than its {}-byte header", setup.page_size,
                             setup.layout.header_size())};
  auto s = std::make_unique<MergedStream>(std::move(setup));
  TRACEBED_TRY(s->init());
  return std::unique_ptr<EventStream>(std::move(s));
}

}  // namespace tracebed::decode
