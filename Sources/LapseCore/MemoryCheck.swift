// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Whether the machine can hold an allocation a setting asks for, checked before the work starts, so a size too
/// large for the machine fails at once with a line that says so instead of growing until the kernel kills the
/// process.
public enum MemoryCheck {
    /// Bytes the process may still allocate: the kernel's `MemAvailable` (`/proc/meminfo`), lowered to what is left
    /// under the control group's limit (cgroup v2 `memory.max` less `memory.current`, or v1 `memory.limit_in_bytes`
    /// less `memory.usage_in_bytes`) when one is set. Nil when none of them can be read.
    public static func available() -> Int? {
        var result: Int?
        if let text = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
            let kB = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        {
            result = kB * 1024
        }
        let groups: [(String, String)] = [
            ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes")
        ]
        for (limitPath, usagePath) in groups {
            guard let limit = number(limitPath), let usage = number(usagePath), limit < 1 << 60 else { continue }
            let left = max(0, limit - usage)
            result = min(result ?? left, left)
            break
        }
        return result
    }

    /// Throws when `bytes` is more than ``available()`` (nothing is checked when that is unknown).
    /// - Parameters:
    ///   - bytes: what the work will allocate, estimated from its sizes.
    ///   - subject: what the error names (the output, or the setting).
    ///   - what: the work, in words (`"a 16000x12000 view"`).
    /// - Throws: ``LapseError`` `.other`: "`what` needs about N GB, more than the M GB this machine has free".
    public static func check(_ bytes: Int, subject: String?, for what: String) throws {
        guard let available = available(), bytes > available else { return }
        throw LapseError(
            .other, subject,
            "\(what) needs about \(gigabytes(bytes)) of memory, more than the \(gigabytes(available)) free here")
    }

    static func gigabytes(_ bytes: Int) -> String {
        String(format: "%.1f GB", Double(bytes) / 1e9)
    }

    private static func number(_ path: String) -> Int? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
