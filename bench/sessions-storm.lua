-- wrk script for bench/sessions.sh: JSON logons on accounts storm1..stormN in
-- turn (N is the script's first argument), every fourth with the right password
-- (storm-password-I), the others wrong. Prints the answers by status at the end.

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    accounts = tonumber(args[1] or "50")
    sent = 0
    counts = {}
end

function request()
    sent = sent + 1
    local i = sent % accounts + 1
    local password = "wrong-password"
    if sent % 4 == 0 then
        password = "storm-password-" .. i
    end
    local body = string.format('{"username":"storm%d","password":"%s","remember":false}', i, password)
    return wrk.format("POST", "/api/auth/logon", { ["Content-Type"] = "application/json" }, body)
end

function response(status, headers, body)
    counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
    local total = {}
    for _, thread in ipairs(threads) do
        for status, n in pairs(thread:get("counts")) do
            total[status] = (total[status] or 0) + n
        end
    end
    local other = 0
    for status, n in pairs(total) do
        if status ~= 200 and status ~= 401 and status ~= 429 and status ~= 503 then
            other = other + n
        end
    end
    io.write(string.format("logons: %d right (200), %d wrong (401), %d throttled (429), %d busy (503), %d other\n",
        total[200] or 0, total[401] or 0, total[429] or 0, total[503] or 0, other))
end
