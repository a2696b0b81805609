-- Wireshark dissector for the user-space MPTCP transport's wire format (transport/core/src/wire.rs).
--
-- Install for the current user (Wireshark and tshark load it at start):
--   mkdir -p ~/.local/lib/wireshark/plugins && cp transport/wireshark/mptransport.lua "$_"
-- or for one run only:
--   tshark -X lua_script:transport/wireshark/mptransport.lua -r FILE.pcap -Y mptransport
--
-- Every datagram is a 19-byte header then frames, integers big-endian:
--   header  magic 'M' (0x4D) | version u8 | conn_id u64 | subflow u8 | pn u64
--   0x01 HELLO     flags u8 (bit0 backup) | name_len u8 | name
--   0x03 ACK       largest u64 | ack_delay_us u32 | n u8 | n x (first u64, last u64)
--   0x04 DATA_ACK  data_ack u64 | window u64
--   0x05 DATA      dsn u64 | len u16 | flags u8 (bit0 FIN) | len bytes
--   0x06 PING
--   0x07 CLOSE     code u8
-- Only version WIRE_VERSION is decoded; another version gets an expert warning and its
-- frames are left alone. Captures made with a snap length (run_trials.sh --pcap keeps
-- headers only by default) end inside a packet: frames past the captured bytes are listed
-- as not captured, which is not an error. A frame that runs past the datagram's real end
-- is malformed (expert error), as the transport itself would reject it.

local WIRE_VERSION = 1 -- = transport/core/src/wire.rs VERSION (tests/test_pcap_dissector.py checks)
local MAGIC = 0x4D
local HEADER_BYTES = 19
local UDP_PORT = 4433 -- = testbed/transports/user.py MPPROXY_PORT

local p = Proto("mptransport", "User-space MPTCP transport")

local frame_names = {
    [0x01] = "HELLO", [0x03] = "ACK", [0x04] = "DATA_ACK",
    [0x05] = "DATA", [0x06] = "PING", [0x07] = "CLOSE",
}
local close_codes = { [0] = "both streams complete", [1] = "abort" }

local f = {
    magic = ProtoField.uint8("mptransport.magic", "Magic", base.HEX),
    version = ProtoField.uint8("mptransport.version", "Version", base.DEC),
    conn_id = ProtoField.uint64("mptransport.conn_id", "Connection id", base.HEX),
    subflow = ProtoField.uint8("mptransport.subflow", "Subflow", base.DEC),
    pn = ProtoField.uint64("mptransport.pn", "Packet number", base.DEC),
    frame_type = ProtoField.uint8("mptransport.frame", "Frame type", base.HEX, frame_names),
    hello_backup = ProtoField.bool("mptransport.hello.backup", "Backup path"),
    hello_name = ProtoField.string("mptransport.hello.name", "Path name"),
    ack_largest = ProtoField.uint64("mptransport.ack.largest", "Largest acknowledged", base.DEC),
    ack_delay = ProtoField.uint32("mptransport.ack.delay_us", "ACK delay (us)", base.DEC),
    ack_n = ProtoField.uint8("mptransport.ack.ranges", "Ranges", base.DEC),
    ack_first = ProtoField.uint64("mptransport.ack.first", "Range first", base.DEC),
    ack_last = ProtoField.uint64("mptransport.ack.last", "Range last", base.DEC),
    data_ack = ProtoField.uint64("mptransport.data_ack", "Data ACK (next expected DSN)", base.DEC),
    window = ProtoField.uint64("mptransport.data_ack.window", "Receive window (bytes)", base.DEC),
    dsn = ProtoField.uint64("mptransport.data.dsn", "Data sequence number", base.DEC),
    data_len = ProtoField.uint16("mptransport.data.len", "Data length", base.DEC),
    data_fin = ProtoField.bool("mptransport.data.fin", "FIN"),
    payload = ProtoField.bytes("mptransport.data.payload", "Payload"),
    close_code = ProtoField.uint8("mptransport.close.code", "Close code", base.DEC, close_codes),
    not_captured = ProtoField.uint32("mptransport.not_captured", "Bytes not captured (snap length)", base.DEC),
}
p.fields = f

local e_version = ProtoExpert.new("mptransport.bad_version", "Unsupported wire format version",
    expert.group.PROTOCOL, expert.severity.WARN)
local e_malformed = ProtoExpert.new("mptransport.malformed", "Malformed frame",
    expert.group.MALFORMED, expert.severity.ERROR)
p.experts = { e_version, e_malformed }

-- Bytes of a frame after its type byte, or nil when unknown; `at` is the type byte's offset.
local function frame_body_len(tvb, at, t, captured)
    if t == 0x01 then
        if at + 3 > captured then return nil, true end
        return 2 + tvb(at + 2, 1):uint()
    elseif t == 0x03 then
        if at + 14 > captured then return nil, true end
        return 13 + 16 * tvb(at + 13, 1):uint()
    elseif t == 0x04 then return 16
    elseif t == 0x05 then
        if at + 11 > captured then return nil, true end
        return 11 + tvb(at + 9, 2):uint()
    elseif t == 0x06 then return 0
    elseif t == 0x07 then return 1
    end
    return nil, false
end

local function dissect_frame(tvb, tree, at, t, body)
    local sub = tree:add(p, tvb(at, 1 + body), "Frame " .. (frame_names[t] or "?"))
    sub:add(f.frame_type, tvb(at, 1))
    local b = at + 1
    if t == 0x01 then
        sub:add(f.hello_backup, tvb(b, 1), bit.band(tvb(b, 1):uint(), 1) ~= 0)
        sub:add(f.hello_name, tvb(b + 2, tvb(b + 1, 1):uint()))
    elseif t == 0x03 then
        sub:add(f.ack_largest, tvb(b, 8))
        sub:add(f.ack_delay, tvb(b + 8, 4))
        local n = tvb(b + 12, 1):uint()
        sub:add(f.ack_n, tvb(b + 12, 1))
        for i = 0, n - 1 do
            local r = b + 13 + 16 * i
            local rt = sub:add(p, tvb(r, 16), "Range " .. tvb(r, 8):uint64() .. "-" .. tvb(r + 8, 8):uint64())
            rt:add(f.ack_first, tvb(r, 8))
            rt:add(f.ack_last, tvb(r + 8, 8))
        end
    elseif t == 0x04 then
        sub:add(f.data_ack, tvb(b, 8))
        sub:add(f.window, tvb(b + 8, 8))
    elseif t == 0x05 then
        sub:add(f.dsn, tvb(b, 8))
        sub:add(f.data_len, tvb(b + 8, 2))
        sub:add(f.data_fin, tvb(b + 10, 1), bit.band(tvb(b + 10, 1):uint(), 1) ~= 0)
        local len = tvb(b + 8, 2):uint()
        if len > 0 then sub:add(f.payload, tvb(b + 11, len)) end
    elseif t == 0x07 then
        sub:add(f.close_code, tvb(b, 1))
    end
    return sub
end

function p.dissector(tvb, pinfo, tree)
    local captured = tvb:len()
    local reported = tvb:reported_len()
    if reported < HEADER_BYTES or captured < 2 or tvb(0, 1):uint() ~= MAGIC then return 0 end
    pinfo.cols.protocol = "MPTRANSPORT"
    local root = tree:add(p, tvb(), "User-space MPTCP transport")
    root:add(f.magic, tvb(0, 1))
    local vi = root:add(f.version, tvb(1, 1))
    local version = tvb(1, 1):uint()
    if version ~= WIRE_VERSION then
        vi:add_proto_expert_info(e_version, "version " .. version .. "; this dissector decodes version "
            .. WIRE_VERSION .. " (update transport/wireshark/mptransport.lua)")
        return captured
    end
    if captured < HEADER_BYTES then
        root:add(f.not_captured, reported - captured):set_generated()
        return captured
    end
    root:add(f.conn_id, tvb(2, 8))
    root:add(f.subflow, tvb(10, 1))
    root:add(f.pn, tvb(11, 8))
    local names = {}
    local at = HEADER_BYTES
    while at < reported do
        if at >= captured then
            root:add(f.not_captured, reported - at):set_generated()
            break
        end
        local t = tvb(at, 1):uint()
        local body, cut = frame_body_len(tvb, at, t, captured)
        if body == nil and cut then
            root:add(f.not_captured, reported - at):set_generated()
            break
        elseif body == nil then
            root:add_proto_expert_info(e_malformed, string.format("unknown frame type 0x%02x", t))
            break
        end
        if at + 1 + body > reported then
            root:add_proto_expert_info(e_malformed, (frame_names[t] or "?") .. " frame runs past the datagram")
            break
        end
        if at + 1 + body > captured then
            -- The frame's fixed fields may be there (a DATA frame's header before its payload).
            if t == 0x05 and at + 12 <= captured then
                local sub = root:add(p, tvb(at, 12), "Frame DATA (payload not captured)")
                sub:add(f.frame_type, tvb(at, 1))
                sub:add(f.dsn, tvb(at + 1, 8))
                sub:add(f.data_len, tvb(at + 9, 2))
                sub:add(f.data_fin, tvb(at + 11, 1), bit.band(tvb(at + 11, 1):uint(), 1) ~= 0)
                names[#names + 1] = "DATA"
            end
            root:add(f.not_captured, reported - captured):set_generated()
            break
        end
        dissect_frame(tvb, root, at, t, body)
        names[#names + 1] = frame_names[t]
        at = at + 1 + body
    end
    pinfo.cols.info = string.format("conn %s sf %d pn %s %s", tvb(2, 8):uint64():tohex(),
        tvb(10, 1):uint(), tvb(11, 8):uint64(), table.concat(names, ","))
    return captured
end

DissectorTable.get("udp.port"):add(UDP_PORT, p)

local function heuristic(tvb, pinfo, tree)
    if tvb:reported_len() < HEADER_BYTES or tvb:len() < 2 then return false end
    if tvb(0, 1):uint() ~= MAGIC or tvb(1, 1):uint() ~= WIRE_VERSION then return false end
    p.dissector(tvb, pinfo, tree)
    return true
end
p:register_heuristic("udp", heuristic)
