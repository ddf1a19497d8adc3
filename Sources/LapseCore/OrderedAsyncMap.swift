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
/// - Throws: the first error of `produce` or `consume` (the items still in flight are cancelled).
public func forEachOrdered<T: Sendable>(
    count: Int, concurrency: Int,
    produce: @escaping @Sendable (Int) async throws -> T,
    consume: (Int, T) async throws -> Void
) async throws {
    var issued = 0
    try await forEachOrdered(
        pulling: {
            guard issued < count else { return nil }
            defer { issued += 1 }
            return issued
        }, concurrency: concurrency, produce: produce, consume: consume)
}

/// As ``forEachOrdered(count:concurrency:produce:consume:)`` for a sequence whose length is not known in advance:
/// `next` is asked for the next input whenever fewer than `concurrency` items are in flight, and returns `nil`
/// at the end. Inputs are numbered in the order `next` returns them; `consume` receives the outputs in that order.
///
/// `next` runs in the calling task, between consumptions (never at the same time as `consume`), so it may keep
/// state of its own; while it suspends (e.g. waiting for a lookup), the items in flight go on being produced.
public func forEachOrdered<Input: Sendable, T: Sendable>(
    pulling next: () async throws -> Input?, concurrency: Int,
    produce: @escaping @Sendable (Input) async throws -> T,
    consume: (Int, T) async throws -> Void
) async throws {
    let limit = max(1, concurrency)
    try await withThrowingTaskGroup(of: (Int, T).self) { group in
        var started = 0
        var consumed = 0
        var exhausted = false
        var ready: [Int: T] = [:]
        func fill() async throws {
            while !exhausted && started - consumed < limit {
                guard let input = try await next() else {
                    exhausted = true
                    break
                }
                let index = started
                group.addTask { (index, try await produce(input)) }
                started += 1
            }
        }
        try await fill()
        while consumed < started {
            guard let (index, value) = try await group.next() else { break }
            ready[index] = value
            while let item = ready.removeValue(forKey: consumed) {
                try Task.checkCancellation()
                try await consume(consumed, item)
                consumed += 1
            }
            try await fill()
        }
    }
}
