// SPDX-License-Identifier: GPL-3.0-or-later

/// Parsing of time values given by users.
public enum TimeValue {
    /// The longest time taken, seconds (about 31 700 years): beyond it a time is a slip of the keyboard.
    public static let maximum = 1e12

    /// Parses seconds (`12.5`) or `[HH:]MM:SS[.mmm]` (`1:02:03.5`, `02:03`).
    /// - Returns: seconds, 0…``maximum``, or `nil` when the text is not such a time.
    public static func parse(_ text: String) -> Double? {
        guard let seconds = parseUnbounded(text), seconds <= maximum else { return nil }
        return seconds
    }

    private static func parseUnbounded(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        if parts.count == 1 {
            guard let s = NumberText.decimal(text), s >= 0 else { return nil }
            return s
        }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            if isLast {
                guard let s = NumberText.decimal(part), s >= 0, s < 60, part.first?.isNumber == true else { return nil }
                total = total * 60 + s
            } else {
                // Digits from the first character: Int reads "-0" as 0, so "-0:01" was 1 s.
                guard part.first?.isNumber == true, let v = Int(part), v >= 0 else { return nil }
                if index > 0 && v >= 60 { return nil }
                total = total * 60 + Double(v)
            }
        }
        return total
    }

    /// Formats seconds as `H:MM:SS.mmm` (or `M:SS.mmm` under an hour; `-` before a negative time); a time that is
    /// not finite or beyond ``maximum`` as the number of seconds (`1e+300 s`).
    public static func format(_ seconds: Double) -> String {
        guard seconds.isFinite, abs(seconds) <= maximum else { return "\(seconds) s" }
        if seconds < 0 { return "-" + format(-seconds) }
        let ms = Int((seconds * 1000).rounded())
        let h = ms / 3_600_000
        let m = (ms / 60_000) % 60
        let s = (ms / 1000) % 60
        let f = ms % 1000
        let tail = "\(s < 10 ? "0" : "")\(s).\(String(format3: f))"
        return h > 0 ? "\(h):\(m < 10 ? "0" : "")\(m):\(tail)" : "\(m):\(tail)"
    }
}

extension String {
    fileprivate init(format3 value: Int) {
        self = value < 10 ? "00\(value)" : value < 100 ? "0\(value)" : "\(value)"
    }
}
