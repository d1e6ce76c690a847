-- wrk script: each connection waits PAUSE milliseconds (the first argument,
-- default 1) after every answer, so the load stays well below saturation and
-- the latency wrk reports is the server's, not a queue wrk built itself.
function init(args)
    pause = tonumber(args[1] or "1")
end

function delay()
    return pause
end
