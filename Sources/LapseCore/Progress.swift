// SPDX-License-Identifier: GPL-3.0-or-later

/// One progress report of a long-running job.
public struct ProgressEvent: Sendable, Equatable {
    /// The stage this is about, e.g. "decode", "encode", "download", "render".
    public var stage: String
    /// Units done so far (frames, images, bytes, panoramas…).
    public var completed: Int
    /// Units in all, when known.
    public var total: Int?
    /// What the units are ("frames", "images", "tiles").
    public var unit: String

    public init(stage: String, completed: Int, total: Int?, unit: String) {
        self.stage = stage
        self.completed = completed
        self.total = total
        self.unit = unit
    }

    /// Completed fraction in 0…1, when the total is known.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(completed) / Double(total))
    }
}

/// Where jobs send their progress. Called from any thread; must return quickly.
public typealias ProgressHandler = @Sendable (ProgressEvent) -> Void

/// Warnings a job wants the user to see (a skipped image, a repeated frame), one line each.
public typealias WarningHandler = @Sendable (String) -> Void
