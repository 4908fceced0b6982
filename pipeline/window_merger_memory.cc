// WindowMerger: memory accounting (MemoryUsage, and what closing one group frees).
#include "pipeline/window_merger_impl.h"

namespace logfold {

std::size_t WindowMerger::Impl::MemoryUsage() const {
  // Every heap block with glibc's size word in front of it (as GroupIndex counts them);
  // the flat tables counted by their arrays.
  std::size_t bytes = groups.capacity() * sizeof(Group) +
                      bucket_links.capacity() * sizeof(BucketLink) + index.MemoryUsage() +
                      exact.MemoryUsage() + buckets.MemoryUsage() + template_text.capacity() +
                      free_slots.capacity() * sizeof(std::uint32_t) + siblings.MemoryUsage() +
                      value_words.MemoryUsage() + shape_scratch.capacity() * sizeof(std::uint64_t) +
                      headers.MemoryUsage();
  for (const Group& g : groups) bytes += GroupBlocks(g);
  return bytes;
}

// The heap blocks one group holds (0 for a closed slot), as MemoryUsage counts them.
std::size_t WindowMerger::Impl::GroupBlocks(const Group& g) {
  constexpr std::size_t kMallocOverhead = sizeof(std::size_t);
  auto block = [](std::size_t n) { return n == 0 ? 0 : n + kMallocOverhead; };
  std::size_t bytes =
      block(g.tokens.MemoryUsage()) + block(g.first.MemoryUsage()) + block(g.last.MemoryUsage());
  if (g.extras != nullptr) {
    bytes += block(sizeof(GroupExtras)) + block(g.extras->aliases.capacity() * 8) +
             block(g.extras->slots.capacity() * sizeof(SlotStats)) +
             (g.extras->peer != nullptr ? block(sizeof(SlotStats)) : 0) +
             block(g.extras->hosts.capacity() * sizeof(std::string));
    for (const std::string& h : g.extras->hosts) {
      if (h.capacity() > 15) bytes += block(h.capacity() + 1);
    }
  }
  return bytes;
}

}  // namespace logfold
