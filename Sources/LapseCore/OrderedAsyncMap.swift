// SPDX-License-Identifier: GPL-3.0-or-later

/// Produces items `0..<count` concurrently, at most `concurrency` at a time, and consumes them in index order.
///
/// At most `concurrency` items are being produced or waiting to be consumed at any moment, so memory stays
/// bounded whatever `count` is: production runs a bounded distance ahead of consumption. The first error
/// (from `produce` or `consume`) cancels the items still in flight and is rethrown.
///
/// - Parameters:
///   - count: number of items, ≥ 0.
///   - concurrency: items in flight, ≥ 1.
///   - produce: makes item `i` (may suspend, e.g. for downloads; may block briefly, e.g. for rendering).
///   - consume: receives the items in order `0, 1, 2, …`, one at a time.
public func forEachOrdered<T: Sendable>(
    count: Int, concurrency: Int,
    produce: @escaping @Sendable (Int) async throws -> T,
    consume: (Int, T) async throws -> Void
) async throws {
    let limit = max(1, concurrency)
    try await withThrowingTaskGroup(of: (Int, T).self) { group in
        var started = 0
        var next = 0
        var ready: [Int: T] = [:]
        func fill() {
            while started < count && (started - next) < limit {
                let index = started
                group.addTask { (index, try await produce(index)) }
                started += 1
            }
        }
        fill()
        while next < count {
            guard let (index, value) = try await group.next() else { break }
            ready[index] = value
            while let item = ready.removeValue(forKey: next) {
                try Task.checkCancellation()
                try await consume(next, item)
                next += 1
            }
            fill()
        }
    }
}
