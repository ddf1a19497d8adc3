// SPDX-License-Identifier: GPL-3.0-or-later
import LapseKit

enum VideoCommand: Command {
    static let name = "video"
    static let summary = "Turn still images into an MP4/MOV video that plays everywhere"
    static let help = """
        lapse video [options] INPUT... -o OUTPUT
        """
    static func run(_ arguments: inout Arguments, console: Console) async throws {
        throw LapseError(.other, nil, "lapse video is not built yet")
    }
}
