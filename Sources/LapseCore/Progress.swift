// SPDX-License-Identifier: GPL-3.0-or-later

/// The stages a job reports its progress in; the raw value is the name the command line shows.
public enum ProgressStage: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// A route planned by a directions service.
    case route
    /// Route points looked up for their nearest panorama.
    case lookup
    /// Panoramas' pictures analysed by the stabiliser.
    case analyse
    /// Frames rendered (a hyperlapse).
    case render
    /// Frames encoded (`lapse video`, a GIF's frames written).
    case encode
    /// A GIF's frames sampled and added.
    case gif
    /// A clip's frames copied or re-encoded.
    case clip
    /// Videos joined.
    case concat
    /// Panoramas exported (`lapse panoramas`).
    case panoramas
    /// A panorama's tiles fetched.
    case tiles
    /// Tiles downloaded along a whole job.
    case download

    /// The stage's name, as the command line shows it.
    public var description: String { rawValue }
}

/// One progress report of a long-running job.
public struct ProgressEvent: Sendable, Equatable {
    /// The stage this is about.
    public var stage: ProgressStage
    /// Units done so far (frames, images, bytes, panoramas…).
    public var completed: Int
    /// Units in all, when known.
    public var total: Int?
    /// What the units are ("frames", "images", "tiles").
    public var unit: String
    /// What else the stage has done, in words, when its units are not what it makes (e.g. "20 frames" while
    /// rendering counts route points).
    public var detail: String?

    /// An event of `stage`: `completed` of `total` (nil when unknown) in `unit`, with an optional `detail`.
    public init(stage: ProgressStage, completed: Int, total: Int?, unit: String, detail: String? = nil) {
        self.stage = stage
        self.completed = completed
        self.total = total
        self.unit = unit
        self.detail = detail
    }

    /// Completed fraction in 0…1, when the total is known.
    public var fraction: Double? {
        guard let total, total > 0 else { return nil }
        return min(1, Double(completed) / Double(total))
    }

    /// Finished: the total is known and reached.
    public var isDone: Bool { total.map { completed >= $0 } ?? false }

    /// The unit as it agrees with the count: "1/1 image", "1 frame", "2 frames" (the total's number when known).
    public var countedUnit: String {
        (total ?? completed) == 1 && unit.hasSuffix("s") ? String(unit.dropLast()) : unit
    }

    /// The stage's line on a terminal, `elapsed` seconds after its first event: its name, a 24-cell bar, the count
    /// and percentage when the total is known; the rate and the time left (ETA, m:ss or h:mm:ss, rounded up) once
    /// it has run half a second; its time when finished. E.g.
    /// `render [#########...............] 48/120 frames 40%, 12 frames/s, ETA 0:06`,
    /// `render [########################] 120/120 frames 100%, 9.8 s`, `analyse 60 panoramas, 54 panoramas/s`.
    public func terminalLine(elapsed: Double) -> String {
        var line = stage.rawValue + " "
        if let fraction, let total {
            let width = 24
            let filled = min(width, Int(fraction * Double(width)))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] "
            line += "\(completed)/\(total) \(countedUnit) \(Int(fraction * 100))%"
        } else {
            line += "\(completed) \(countedUnit)"
        }
        if let detail { line += ", " + detail }
        if isDone {
            line += ", " + Self.decimal(elapsed) + " s"
        } else if elapsed >= 0.5, completed > 0 {
            let rate = Double(completed) / elapsed
            line += ", " + (rate < 10 ? Self.decimal(rate) : String(Int(rate.rounded()))) + " \(unit)/s"
            if let total {
                let left = Int((Double(total - completed) / rate).rounded(.up))
                let (h, m, s) = (left / 3600, left / 60 % 60, left % 60)
                line += ", ETA " + (h > 0 ? "\(h):" + Self.twoDigits(m) : "\(m)") + ":" + Self.twoDigits(s)
            }
        }
        return line
    }

    private static func decimal(_ v: Double) -> String {
        let tenths = Int((v * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func twoDigits(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
}

/// Where jobs send their progress. Called from any thread; must return quickly.
public typealias ProgressHandler = @Sendable (ProgressEvent) -> Void

/// Warnings a job wants the user to see (a skipped image, a repeated frame), one line each.
public typealias WarningHandler = @Sendable (String) -> Void
